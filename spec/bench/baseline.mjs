// The yardstick for `npm run bench`: a bare node:http server doing the least a webhook
// receiver must do — check a token, read a bounded body, parse JSON, answer. No framework,
// no validation, no storage. Every hookrelay figure is reported as a ratio to this one,
// measured in the same run on the same core.
import http from 'node:http';

const [port, token, maxBytes] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] ?? 262144)];
const bearer = `Bearer ${token}`;

http.createServer((req, res) => {
  if (req.headers.authorization !== bearer) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end('{"ok":false,"error":{"code":"unauthorized","message":"bad token"}}');
    return;
  }
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) {
    res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
    res.end('{"ok":false,"error":{"code":"payload_too_large","message":"too large"}}');
    return;
  }
  const chunks = [];
  let size = 0;
  req.on('data', (c) => { size += c.length; chunks.push(c); });
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks, size).toString('utf8') || '{}');
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end('{"ok":false}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
}).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
