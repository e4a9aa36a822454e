import { convert } from 'html-to-text';
import { simpleParser, type AddressObject } from 'mailparser';

/**
 * One mail as the e-mail preset takes it (CONTRACT.md §7): `{id, threadId?, from, subject,
 * snippet, body}`, from the raw RFC 5322 source. mailparser decodes the MIME structure,
 * transfer encodings and charsets (ISO-8859-1, Shift_JIS… through iconv-lite).
 */
export interface MailFields {
  id: string;
  threadId?: string;
  from: string;
  subject: string;
  snippet: string;
  body: string;
}

export interface MailLimits {
  bodyMaxChars: number;
  snippetChars: number;
}

/** Where the mail sits, for the id of a mail without a Message-ID. */
export interface MailPlace {
  uidValidity: bigint | number | string;
  uid: number;
}

/**
 * Parses `source` into the preset's fields. The body is the text part, else the HTML part
 * turned into text; attachments are left out (only their bodies would be, and those are not
 * for the model). `id` is the Message-ID without angle brackets, else `<UIDVALIDITY>:<UID>`;
 * `threadId` the first Message-ID of References, else In-Reply-To, else absent.
 */
export async function mailFields(source: Buffer, place: MailPlace, limits: MailLimits): Promise<MailFields> {
  // skipHtmlToText / skipTextToHtml: we choose the HTML conversion ourselves, and need no HTML.
  const mail = await simpleParser(source, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  const text = mail.text?.trim() ? mail.text : typeof mail.html === 'string' ? htmlText(mail.html) : '';
  const body = cut(tidy(text), limits.bodyMaxChars);
  const threadId = firstId(mail.references) ?? firstId(mail.inReplyTo);
  return {
    id: bare(mail.messageId) ?? `${place.uidValidity}:${place.uid}`,
    ...(threadId ? { threadId } : {}),
    from: sender(mail.from) || '(unknown sender)',
    subject: (mail.subject ?? '').trim(),
    snippet: cut(body.replace(/\s+/g, ' ').trim(), limits.snippetChars),
    body,
  };
}

function htmlText(html: string): string {
  return convert(html, {
    wordwrap: false,
    selectors: [
      // Links keep their text; the URL in brackets only when it differs from the text.
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } },
      { selector: 'img', format: 'skip' },
    ],
  });
}

/** `"Name" <addr>` as the mail gives it (mailparser decodes encoded words). */
function sender(from: AddressObject | undefined): string {
  return (from?.text ?? '').trim();
}

/** The first `<…>` of a header (References lists several), or its first word; no brackets. */
function firstId(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  if (!first) return undefined;
  const m = /<([^<>\s]+)>/.exec(first);
  return m ? m[1] : bare(first.trim().split(/\s+/)[0]);
}

function bare(id: string | undefined): string | undefined {
  const s = id?.trim().replace(/^<|>$/g, '').trim();
  return s || undefined;
}

/** Unix line ends, no trailing spaces, at most one blank line in a row. */
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
