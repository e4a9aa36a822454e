import http from 'node:http';

/** `serve` says "ready" only once its own `/healthz` answers a client; false when `timeoutMs` passed first. */
export async function healthzAnswers(url: string, timeoutMs = 30_000): Promise<boolean> {
  const target = new URL('/healthz', url);
  target.hostname = localHost(target.hostname);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await askOnce(target, deadline - Date.now())) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/** The address that reaches a listener on `host` from this machine: a wildcard listens on loopback too. */
export function localHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
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
