import http from 'node:http';

/**
 * Asks the gateway's own `/healthz` over the network until it answers 200, so that `serve`
 * says "ready" only when a client would get an answer (issue 32: on a busy machine the line
 * came seconds before `/healthz` answered). A wildcard listen address is asked on loopback.
 * Resolves true once answered, false when `timeoutMs` passed first (`serve` then says so).
 */
export async function healthzAnswers(url: string, timeoutMs = 30_000): Promise<boolean> {
  const target = new URL('/healthz', url);
  if (target.hostname === '0.0.0.0') target.hostname = '127.0.0.1';
  if (target.hostname === '[::]') target.hostname = '[::1]';
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await askOnce(target, deadline - Date.now())) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function askOnce(target: URL, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    // x-request-id: the access log names this request as the start-up check.
    const req = http.get(target, { headers: { 'x-request-id': 'ready-check' }, agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
