/**
 * Example transform: a GitHub `push` event becomes one agent turn that summarises the push.
 *
 *   hooks:
 *     mappings:
 *       - id: github-push
 *         match: { path: github }
 *         transform: { module: github-push.ts }
 *
 * A transform returns a partial action that overrides the mapping's templates, `null` to
 * skip the request (204), or `undefined` to keep the template result as it is. It is loaded
 * with the config, and again when this file is saved (a reload, docs/configuration.md); keep
 * it fast and free of I/O — it runs on every request.
 * Copy it into your own transformsDir and adapt it. It imports only hookrelay's types (erased
 * when it runs), so it type-checks against the real contract: TransformInput, TransformResult.
 */
import type { Transform } from 'hookrelay';

interface Commit {
  id?: string;
  message?: string;
  author?: { name?: string };
}

interface PushEvent {
  ref?: string;
  deleted?: boolean;
  compare?: string;
  commits?: Commit[];
  pusher?: { name?: string };
  repository?: { id?: number; full_name?: string };
}

const MAX_LISTED = 20;
const BRANCH_PREFIX = /^refs\/heads\//;

const githubPush: Transform = ({ payload, headers }) => {
  // GitHub sends `ping` when the webhook is created, and other events if subscribed: skip them.
  const event = headers['x-github-event'];
  if (event !== undefined && event !== 'push') return null;
  const push = payload as PushEvent;
  const commits = Array.isArray(push.commits) ? push.commits : [];
  if (push.deleted || commits.length === 0) return null; // a branch deletion has nothing to read

  const repo = push.repository?.full_name ?? 'a repository';
  const branch = (push.ref ?? '').replace(BRANCH_PREFIX, '');
  const lines = commits.slice(0, MAX_LISTED).map((c) => {
    const title = (c.message ?? '').split('\n', 1)[0];
    return `- ${(c.id ?? '').slice(0, 7)} ${title} (${c.author?.name ?? 'unknown'})`;
  });
  if (commits.length > MAX_LISTED) lines.push(`… and ${commits.length - MAX_LISTED} more`);
  const count = commits.length === 1 ? '1 commit' : `${commits.length} commits`;
  const header = `Push to ${repo}${branch ? ` (${branch})` : ''} by ${push.pusher?.name ?? 'someone'}: ${count}`;

  return {
    name: 'GitHub',
    // One conversation per repository: the agent sees the previous pushes of the same repo.
    sessionKey: `hook:github:${push.repository?.id ?? repo}`,
    message: [header, ...lines, push.compare ? `Compare: ${push.compare}` : ''].filter(Boolean).join('\n'),
  };
};
export default githubPush;
