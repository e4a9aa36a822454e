import { createHash } from 'node:crypto';
import { convert } from 'html-to-text';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';

/** One mail as the e-mail preset takes it (CONTRACT.md §7); `threadId` is decided by the watcher (threads.ts). */
export interface MailFields {
  id: string;
  uid: string;
  threadId?: string;
  from: string;
  subject: string;
  snippet: string;
  body: string;
  /** Why the mail could not be read whole; the fields above are what its headers said. */
  parseError?: string;
}

export interface ReadMail {
  fields: MailFields;
  /** The thread ids it names, References first then In-Reply-To, each as safe as `id`. */
  threadIds: string[];
  sender?: string;
  addresses: string[];
}

export interface MailLimits {
  bodyMaxChars: number;
  snippetChars: number;
}

/** `uid` is `<UIDVALIDITY>:<UID>`, the id of a mail without a Message-ID. */
export interface MailPlace {
  uidValidity: bigint | number | string;
  uid: number;
  /** Its size on the server (RFC822.SIZE), when the source given is only its start. */
  size?: number;
}

/** A partial fetch (`BODY.PEEK[]<0.N>`) of about the largest mail the big providers accept. */
export const SOURCE_MAX_BYTES = 25 * 1024 * 1024;

/** htmlparser2 slows more than linearly with nesting, and the first 128 Ki characters fill any body we post. */
const HTML_MAX_CHARS = 128 * 1024;
/** html-to-text's own guards (its `limits` option): nesting and children walked per element. */
const HTML_LIMITS = { maxDepth: 64, maxChildNodes: 2000, ellipsis: '…' };
/** Thread ids and addresses taken from one mail: a stranger's long References list stays a list of 50. */
const MAX_THREAD_IDS = 50;
const MAX_ADDRESSES = 50;
const FALLBACK_HEADERS = /^(from|to|cc|subject|message-id|references|in-reply-to|date|mime-version)$/i;
const FALLBACK_VALUE_MAX = 4096;

/** The text part, else the HTML as text. Never throws: a mail mailparser refuses carries `parseError`. */
export async function readMail(source: Buffer, place: MailPlace, limits: MailLimits): Promise<ReadMail> {
  const uid = `${place.uidValidity}:${place.uid}`;
  let mail: ParsedMail;
  let parseError: string | undefined;
  try {
    // skipHtmlToText / skipTextToHtml: we choose the HTML conversion ourselves, and need no HTML.
    mail = await simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  } catch (e) {
    parseError = `${(e as Error).message || 'the mail could not be parsed'}; only its main headers were read`;
    try {
      mail = await simpleParser(mainHeaders(source), { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
    } catch {
      mail = { attachments: [], headers: new Map(), headerLines: [], html: false } as unknown as ParsedMail;
    }
  }
  if (place.size !== undefined && place.size > source.length) {
    const cutNote = `the mail has ${place.size} bytes; only its first ${source.length} were read`;
    parseError = parseError ? `${cutNote}; ${parseError}` : cutNote;
  }
  let text = '';
  try {
    text = mail.text?.trim() ? mail.text : typeof mail.html === 'string' ? htmlText(mail.html) : '';
  } catch (e) {
    parseError ??= `the HTML body could not be turned into text (${(e as Error).message})`;
  }
  const body = cut(tidy(text), limits.bodyMaxChars);
  const messageId = bare(mail.messageId);
  const threadIds = [...allIds(mail.references), ...allIds(mail.inReplyTo)].slice(0, MAX_THREAD_IDS).map(safeId);
  return {
    fields: {
      id: messageId ? safeId(messageId) : uid,
      uid,
      from: (mail.from?.text ?? '').trim() || '(unknown sender)',
      subject: (mail.subject ?? '').trim(),
      snippet: cut(body.replace(/\s+/g, ' ').trim(), limits.snippetChars),
      body,
      ...(parseError ? { parseError } : {}),
    },
    threadIds: [...new Set(threadIds)],
    sender: addressesOf(mail.from)[0],
    addresses: [...new Set([mail.from, mail.to, mail.cc].flatMap(addressesOf))].slice(0, MAX_ADDRESSES),
  };
}

/** Readable when short printable ASCII without spaces, else `sha256:<base64url>`. */
export function safeId(id: string): string {
  return /^[\x21-\x7e]{1,180}$/.test(id) ? id : `sha256:${createHash('sha256').update(id).digest('base64url')}`;
}

/** First occurrence of each wanted header, unfolded and cut, so the read is linear and bounded whatever the mail holds. */
function mainHeaders(source: Buffer): Buffer {
  const end = source.indexOf('\r\n\r\n');
  const block = source.subarray(0, end < 0 ? source.length : end).toString('latin1');
  const kept = new Map<string, string>();
  let current: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line)) {
      if (current && kept.get(current)!.length < FALLBACK_VALUE_MAX) kept.set(current, `${kept.get(current)!}\r\n${line}`.slice(0, FALLBACK_VALUE_MAX));
      continue;
    }
    current = undefined;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim().toLowerCase() : '';
    if (FALLBACK_HEADERS.test(name) && !kept.has(name)) {
      kept.set(name, line.slice(0, FALLBACK_VALUE_MAX));
      current = name;
    }
  }
  return Buffer.from(`${[...kept.values()].join('\r\n')}\r\n\r\n`, 'latin1');
}

function htmlText(html: string): string {
  return convert(html.length > HTML_MAX_CHARS ? html.slice(0, HTML_MAX_CHARS) : html, {
    wordwrap: false,
    limits: HTML_LIMITS,
    selectors: [
      // Links keep their text; the URL in brackets only when it differs from the text.
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } },
      { selector: 'img', format: 'skip' },
    ],
  });
}

/** Bare addresses, lower-case (RFC 5321's local part may be case-sensitive; no one relies on it). */
function addressesOf(field: AddressObject | AddressObject[] | undefined): string[] {
  const out: string[] = [];
  const walk = (list: { address?: string; group?: unknown[] }[]) => {
    for (const a of list) {
      if (out.length >= MAX_ADDRESSES) return;
      if (a.address) out.push(a.address.trim().toLowerCase());
      else if (Array.isArray(a.group)) walk(a.group as { address?: string }[]);
    }
  };
  for (const f of Array.isArray(field) ? field : field ? [field] : []) walk(f.value);
  return out;
}

/** Every `<…>` of a header (References lists several), else its first word; no brackets. */
function allIds(value: string | string[] | undefined): string[] {
  const all = Array.isArray(value) ? value : value ? [value] : [];
  const out: string[] = [];
  for (const v of all) {
    const ids = [...v.matchAll(/<([^<>]+)>/g)].map((m) => m[1]!.trim()).filter(Boolean);
    if (ids.length > 0) out.push(...ids);
    else {
      const word = bare(v.trim().split(/\s+/)[0]);
      if (word) out.push(word);
    }
    if (out.length >= MAX_THREAD_IDS) break;
  }
  return out;
}

function bare(id: string | undefined): string | undefined {
  const s = id?.trim().replace(/^<|>$/g, '').trim();
  return s || undefined;
}

function tidy(text: string): string {
  return text.replace(/\r\n?/g, '\n').replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

/** At most `max` characters (code points), cut at a word boundary when one is near, marked with …. */
function cut(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  let s = chars.slice(0, max - 1).join('');
  const space = s.search(/\s\S*$/);
  if (space > max * 0.8) s = s.slice(0, space);
  return `${s.trimEnd()}…`;
}
