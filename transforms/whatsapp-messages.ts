/**
 * Example transform: the messages of a WhatsApp Cloud API notification become one agent turn
 * per sender's conversation; everything else Meta sends on the same webhook (delivery and read
 * `statuses`, errors) is acknowledged and skipped (204), so that Meta does not retry it.
 *
 *   hooks:
 *     mappings:
 *       - id: whatsapp
 *         match: { path: whatsapp }
 *         auth: signature
 *         verify: { scheme: meta, secret: "${META_APP_SECRET}", verifyToken: "${META_VERIFY_TOKEN}" }
 *         transform: { module: whatsapp-messages.ts }
 *
 * Payload: https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 * Copy it into your own transformsDir and adapt it.
 */
import type { Transform } from 'hookrelay';

interface Message {
  from?: string;
  type?: string;
  text?: { body?: string };
  image?: { caption?: string };
  document?: { filename?: string; caption?: string };
}

interface Change {
  field?: string;
  value?: { contacts?: { wa_id?: string; profile?: { name?: string } }[]; messages?: Message[] };
}

interface Notification {
  object?: string;
  entry?: { changes?: Change[] }[];
}

const whatsappMessages: Transform = ({ payload }) => {
  const n = payload as Notification;
  if (n.object !== 'whatsapp_business_account') return null;
  const lines: string[] = [];
  const senders = new Set<string>();
  for (const entry of n.entry ?? []) {
    for (const change of entry.changes ?? []) {
      const names = new Map((change.value?.contacts ?? []).map((c) => [c.wa_id, c.profile?.name]));
      for (const m of change.value?.messages ?? []) {
        const from = m.from ?? 'unknown';
        senders.add(from);
        const who = names.get(from) ? `${names.get(from)} (+${from})` : `+${from}`;
        lines.push(`${who}: ${describe(m)}`);
      }
    }
  }
  // Only statuses (sent, delivered, read) or errors: nothing for the agent.
  if (lines.length === 0) return null;
  return {
    name: 'WhatsApp',
    // One conversation per sender: the agent sees what the same person wrote before.
    sessionKey: senders.size === 1 ? `hook:whatsapp:${[...senders][0]}` : null,
    message: lines.join('\n'),
  };
};

function describe(m: Message): string {
  switch (m.type) {
    case 'text': return m.text?.body ?? '';
    case 'image': return `[image]${m.image?.caption ? ` ${m.image.caption}` : ''}`;
    case 'document': return `[document ${m.document?.filename ?? ''}]${m.document?.caption ? ` ${m.document.caption}` : ''}`;
    default: return `[${m.type ?? 'message'}]`;
  }
}

export default whatsappMessages;
