// Example transform in plain JavaScript: an uptime monitor's alert (Uptime Kuma's webhook
// shape: { heartbeat: { status, msg }, monitor: { name, url } }).
//
//   hooks:
//     mappings:
//       - id: uptime
//         match: { path: uptime }
//         action: wake
//         textTemplate: "{{monitor.name}}: {{heartbeat.msg}}"
//         transform: { module: uptime-alert.mjs }
//
// "Up again" only notes a system event for the next heartbeat (the template result stands);
// "down" switches the action to an agent turn that is delivered to the last recipient at once.
// Returning `undefined` keeps the template result, `null` skips the request (204).

const DOWN = 0;

/**
 * hookrelay's types (for editors; a .mjs file imports nothing to run):
 * @param {import('hookrelay').TransformInput} input
 * @returns {import('hookrelay').TransformResult}
 */
export function transform({ payload }) {
  const status = payload?.heartbeat?.status;
  if (status === undefined) return null; // a test notification without a heartbeat: nothing to do
  if (status !== DOWN) return { mode: 'next-heartbeat' };
  const name = payload.monitor?.name ?? 'A monitor';
  const url = payload.monitor?.url ? ` (${payload.monitor.url})` : '';
  return {
    kind: 'agent',
    name: 'Uptime',
    message: `${name}${url} is DOWN: ${payload.heartbeat.msg ?? 'no details'}. Check what changed and tell me in two sentences.`,
    deliver: true,
    wakeMode: 'now',
  };
}
