import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** One benchmark scenario: the same request goes to hookrelay (at `path`) and to the baseline. */
export interface Scenario {
  name: string;
  path: string;
  body: () => string;
  /** Counts toward the p99 < 10 ms goal (answers that accept work). */
  accepted: boolean;
  badToken?: boolean;
  /** Headers sent besides the token, made from the body (e.g. its signature). */
  headers?: (body: string) => Record<string, string>;
}

const MAX_BODY = 65536;
/** The `signed` scenario's GitHub webhook secret. */
const SIGNING_SECRET = 'bench-github-webhook-secret';

/** A trimmed GitHub push payload: the shape real mapped hooks see. */
const push = JSON.stringify({
  ref: 'refs/heads/main',
  before: 'a'.repeat(40),
  after: 'b'.repeat(40),
  repository: { id: 1296269, name: 'api', full_name: 'acme/api', private: false, html_url: 'https://github.com/acme/api', default_branch: 'main' },
  pusher: { name: 'octocat', email: 'octocat@example.com' },
  sender: { login: 'octocat', id: 1, type: 'User' },
  head_commit: { id: 'b'.repeat(40), message: 'Fix the flaky test in the importer', timestamp: '2026-11-22T10:00:00Z', author: { name: 'Octo Cat', email: 'octocat@example.com' } },
  commits: [1, 2, 3].map((i) => ({ id: `${i}`.repeat(40), message: `Commit number ${i}`, author: { name: 'Octo Cat' }, added: [], removed: [], modified: [`src/file${i}.ts`] })),
});

export const SCENARIOS: Scenario[] = [
  { name: 'wake', path: '/wake', accepted: true, body: () => JSON.stringify({ text: 'Disk usage on db1 is at 91 %', mode: 'now' }) },
  { name: 'agent', path: '/agent', accepted: true, body: () => JSON.stringify({ message: 'Summarise ticket 4711 for me', name: 'Tickets', deliver: false, wakeMode: 'next-heartbeat' }) },
  { name: 'handlebars', path: '/github', accepted: true, body: () => push },
  { name: 'jsonata', path: '/orders', accepted: true, body: () => JSON.stringify({ order: { id: 'A7', customer: { name: 'Ada' }, items: [{ sku: 'x', price: 2 }, { sku: 'y', price: 3.5 }, { sku: 'z', price: 10 }] } }) },
  { name: 'transform', path: '/shout', accepted: true, body: () => JSON.stringify({ word: 'hello', from: 'bench' }) },
  { name: 'forEach10', path: '/alerts', accepted: true, body: () => JSON.stringify({ host: 'db1', alerts: Array.from({ length: 10 }, (_, i) => ({ title: `alert ${i}`, severity: i % 3 })) }) },
  { name: 'unauthorized', path: '/wake', accepted: false, badToken: true, body: () => JSON.stringify({ text: 'x' }) },
  { name: 'too_large', path: '/wake', accepted: false, body: () => JSON.stringify({ text: 'x'.repeat(MAX_BODY + 100) }) },
  // The handlebars request again, to a github-verified mapping: the signature check's cost.
  // Last, so that the agent runs it queues are not a background load for the older scenarios.
  { name: 'signed', path: '/signed', accepted: true, body: () => push,
    headers: (body) => ({ 'x-hub-signature-256': `sha256=${createHmac('sha256', SIGNING_SECRET).update(body).digest('hex')}` }) },
];

/** The mappings the scenarios hit; with `mappings`, padded to that many with non-matching ones (start-up time). */
export function benchConfig(o: { dir: string; port: number; token: string; modelUrl: string; mappings?: number; dataDir?: string }) {
  const mappings: Record<string, unknown>[] = [
    { id: 'github', match: { path: 'github' }, action: 'agent', name: 'GitHub', deliver: false, wakeMode: 'next-heartbeat',
      messageTemplate: 'Push to {{repository.full_name}} ({{ref}}) by {{pusher.name}}: {{head_commit.message}} — first commit {{commits[0].id}}',
      sessionKey: 'hook:github:{{repository.id}}' },
    { id: 'signed', match: { path: 'signed' }, action: 'agent', name: 'GitHub', deliver: false, wakeMode: 'next-heartbeat',
      messageTemplate: 'Push to {{repository.full_name}} ({{ref}}) by {{pusher.name}}: {{head_commit.message}} — first commit {{commits[0].id}}',
      sessionKey: 'hook:github:{{repository.id}}', verify: { scheme: 'github', secret: SIGNING_SECRET } },
    { id: 'orders', match: { path: 'orders' }, action: 'agent', engine: 'jsonata', deliver: false, wakeMode: 'next-heartbeat',
      name: '"Orders"', messageTemplate: '"Order " & order.id & " for " & order.customer.name & " total " & $string($sum(order.items.price))' },
    { id: 'shout', match: { path: 'shout' }, action: 'agent', deliver: false, wakeMode: 'next-heartbeat', messageTemplate: 'default', transform: { module: 'shout.ts' } },
    { id: 'alerts', match: { path: 'alerts' }, action: 'wake', wakeMode: 'next-heartbeat', forEach: 'alerts', textTemplate: 'Alert {{index}}: {{title}} (severity {{severity}}) on {{payload.host}}' },
  ];
  for (let i = mappings.length; i < (o.mappings ?? 0); i++) {
    mappings.push(i % 2
      ? { id: `pad-${i}`, match: { path: `pad-${i}`, source: 'bench' }, action: 'wake', textTemplate: `Event {{id}} from {{source}} #${i}: {{detail.summary}}` }
      : { id: `pad-${i}`, match: { path: `pad-${i}` }, action: 'agent', engine: 'jsonata', messageTemplate: `"Item " & id & " #${i}: " & $string($count(items))` });
  }
  return {
    server: { host: '127.0.0.1', port: o.port },
    dataDir: o.dataDir ?? path.join(o.dir, 'data'),
    store: { durability: 'fsync' },
    hooks: { token: o.token, maxBodyBytes: MAX_BODY, transformsDir: path.join(o.dir, 'transforms'), mappings },
    agent: { baseUrl: o.modelUrl, model: 'bench-model', timeoutSeconds: 30, maxConcurrent: 4 },
    heartbeat: { everySeconds: 3600 },
  };
}

export function writeBenchTransforms(dir: string): void {
  fs.mkdirSync(path.join(dir, 'transforms'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'transforms', 'shout.ts'), [
    'type Ctx = { payload: { word?: string; from?: string } };',
    'export default function shout({ payload }: Ctx): { message: string; name: string } | null {',
    '  if (!payload.word) return null;',
    '  return { message: `${payload.from ?? "someone"} says ${payload.word.toUpperCase()}`, name: "Shout" };',
    '}',
  ].join('\n'));
}
