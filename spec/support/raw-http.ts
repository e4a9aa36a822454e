import net from 'node:net';

/** An HTTP/1.1 answer read off a raw socket. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Every status line received, in order (a `100 Continue` comes before the final one). */
  statusLines: string[];
}

/**
 * Sends `head` (request line and headers, no blank line) and `body` on a new socket as written,
 * for path spellings `fetch` would clean up, and reads the final answer.
 */
export function rawRequest(port: number, head: string, body = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`${head}\r\n\r\n${body}`));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const answer = parseAnswer(received);
      if (answer) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed before a complete answer: ${JSON.stringify(received.slice(0, 200))}`)));
  });
}

/** The final answer in `text` once it is complete (Content-Length bodies only), else undefined. */
export function parseAnswer(text: string): RawAnswer | undefined {
  const statusLines: string[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const lines = rest.slice(0, end).split('\r\n');
    statusLines.push(lines[0]!);
    const status = Number(lines[0]!.split(' ')[1]);
    rest = rest.slice(end + 4);
    if (status === 100) continue;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (Buffer.byteLength(rest, 'latin1') < length) return undefined;
    return { status, headers, body: rest.slice(0, length), statusLines };
  }
}

/** Every complete answer in `text`, in order: the answers to requests pipelined on one connection. */
export function parseAnswers(text: string): RawAnswer[] {
  const out: RawAnswer[] = [];
  let rest = text;
  for (;;) {
    const answer = parseAnswer(rest);
    if (!answer) return out;
    out.push(answer);
    let at = 0;
    for (let i = 0; i < answer.statusLines.length; i++) at = rest.indexOf('\r\n\r\n', at) + 4;
    rest = rest.slice(at + answer.body.length); // latin1: one character per byte
  }
}
