import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isMap, isScalar, isSeq, parseDocument, type Document } from 'yaml';
import { ConfigError, type ConfigProblem } from '../config/errors.js';
import { isHttpUrl } from '../config/rules.js';
import { EMAIL_TLS } from '../config/schema.js';
import { spliceHooksKeys } from './yaml-edit.js';

/** `hookrelay email setup` (CONTRACT.md §7): edits the config in place, keeping the user's comments and formatting; never sees the password. */

export interface SetupOptions {
  imapHost?: string;
  imapPort?: string;
  tls?: string;
  user?: string;
  passwordEnv?: string;
  passwordFile?: string;
  mailbox?: string;
  hookUrl?: string;
}

interface EmailSettings {
  imap: Record<string, string | number>;
  mailbox: string;
  hookUrl?: string;
}

/** Returns whether the file changed. @throws ConfigError naming each bad option. */
export function emailSetup(file: string, options: SetupOptions): { changed: boolean } {
  const settings = checkOptions(options);
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const json = /\.json$/i.test(file);
  const next = json ? editJson(text, file, settings) : editYaml(text, file, settings);
  if (next === text) return { changed: false };
  // Temp file + rename: an interrupted write never leaves half a config behind.
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, next, { mode: existsSync(file) ? statSync(file).mode & 0o777 : 0o600 });
  renameSync(temp, file);
  return { changed: true };
}

function checkOptions(o: SetupOptions): EmailSettings {
  const problems: ConfigProblem[] = [];
  const bad = (path: string, message: string) => problems.push({ path, message });
  const host = (o.imapHost ?? '').trim();
  if (!host) bad('--imap-host', 'is required: the IMAP server\'s name, e.g. imap.gmail.com');
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) bad('--imap-host', `must be a host name without a scheme: write ${host.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/[/:].*$/, '')}, and give the port with --imap-port and the encryption with --tls`);
  else if (!validHost(host)) bad('--imap-host', 'must be a host name or an IP address, without a port, path or spaces (give the port with --imap-port)');
  const tls = o.tls ?? 'implicit';
  if (!(EMAIL_TLS as readonly string[]).includes(tls)) bad('--tls', `must be one of ${EMAIL_TLS.join(', ')} (implicit: TLS from the start, port 993; starttls: upgrade on port 143; none: no encryption, for a server on this machine)`);
  let port = tls === 'implicit' ? 993 : 143;
  if (o.imapPort !== undefined) {
    port = Number(o.imapPort);
    if (!/^\d{1,5}$/.test(o.imapPort) || port < 1 || port > 65535) bad('--imap-port', `must be a port number from 1 to 65535, got ${JSON.stringify(o.imapPort)}`);
  }
  const user = (o.user ?? '').trim();
  if (!user) bad('--user', 'is required: the login name (for Gmail, the full address)');
  if ((o.passwordEnv === undefined) === (o.passwordFile === undefined)) {
    bad('--password-env', 'give exactly one of --password-env VAR (an environment variable holding the password) or --password-file FILE; the password itself is never written to the config');
  } else if (o.passwordEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(o.passwordEnv)) {
    bad('--password-env', 'must be the name of an environment variable (letters, digits and _, not starting with a digit), not the password itself');
  } else if (o.passwordFile !== undefined && !o.passwordFile.trim()) {
    bad('--password-file', 'must name a file');
  }
  const mailbox = o.mailbox ?? 'INBOX';
  if (!mailbox.trim()) bad('--mailbox', 'must name a mailbox, e.g. INBOX');
  if (o.hookUrl !== undefined && !isHttpUrl(o.hookUrl)) bad('--hook-url', 'must be an http:// or https:// URL, e.g. http://127.0.0.1:8788/hooks/email');
  if (problems.length > 0) throw new ConfigError(problems);

  const imap: Record<string, string | number> = { host, port, tls, user };
  if (o.passwordEnv !== undefined) imap.passwordEnv = o.passwordEnv;
  else imap.passwordFile = o.passwordFile!;
  return { imap, mailbox, ...(o.hookUrl === undefined ? {} : { hookUrl: o.hookUrl }) };
}

function validHost(host: string): boolean {
  if (host.startsWith('[') && host.endsWith(']')) return isIP(host.slice(1, -1)) === 6;
  if (isIP(host)) return true;
  return /^[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.?$/.test(host);
}

function editYaml(text: string, file: string, settings: EmailSettings): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new ConfigError([{ path: file, message: `is not valid YAML (${doc.errors[0]!.message.split('\n')[0]}): fix it first` }]);
  if (doc.contents === null) doc.contents = doc.createNode({}) as never;
  if (!isMap(doc.contents)) throw new ConfigError([{ path: file, message: 'must hold a mapping (key: value) at the top level' }]);
  let changed = false;
  if (!doc.has('hooks')) {
    doc.set('hooks', doc.createNode({}));
    changed = true;
  }
  if (!isMap(doc.get('hooks'))) throw new ConfigError([{ path: 'hooks', message: 'must be a mapping to add the e-mail settings to it' }]);
  const presets = doc.getIn(['hooks', 'presets']);
  if (presets === undefined) {
    doc.setIn(['hooks', 'presets'], doc.createNode(['email'], { flow: true }));
    changed = true;
  } else if (!isSeq(presets)) {
    throw new ConfigError([{ path: 'hooks.presets', message: 'must be a list to add email to it' }]);
  } else if (!presets.items.some((i) => isScalar(i) && i.value === 'email')) {
    presets.add(doc.createNode('email'));
    changed = true;
  }
  const { hookUrl, ...rest } = settings;
  changed = setChanged(doc, ['hooks', 'email'], rest) || changed;
  if (hookUrl !== undefined) changed = setChanged(doc, ['hooks', 'email', 'hookUrl'], hookUrl) || changed;
  else if (doc.hasIn(['hooks', 'email', 'hookUrl'])) {
    doc.deleteIn(['hooks', 'email', 'hookUrl']);
    changed = true;
  }
  // Unchanged: the text as it was, byte for byte; changed: only hooks.presets and hooks.email.
  return changed ? spliceHooksKeys(text, doc, ['presets', 'email']) : text;
}

/** Only where they differ, so a key the user had keeps its comment and place; a password option given now removes the other. */
function setChanged(doc: Document, path: string[], value: unknown): boolean {
  if (value !== null && typeof value === 'object') {
    let changed = false;
    if (!isMap(doc.getIn(path))) {
      doc.setIn(path, doc.createNode({}));
      changed = true;
    }
    for (const [k, v] of Object.entries(value)) changed = setChanged(doc, [...path, k], v) || changed;
    if (path[path.length - 1] === 'imap') {
      for (const other of ['passwordEnv', 'passwordFile']) {
        if (!(other in value) && doc.hasIn([...path, other])) {
          doc.deleteIn([...path, other]);
          changed = true;
        }
      }
    }
    return changed;
  }
  if (doc.getIn(path) === value) return false;
  doc.setIn(path, value);
  return true;
}

function editJson(text: string, file: string, settings: EmailSettings): string {
  let cfg: Record<string, any>;
  try {
    cfg = text.trim() ? JSON.parse(text) : {};
  } catch {
    throw new ConfigError([{ path: file, message: 'is not valid JSON: fix it first' }]);
  }
  cfg.hooks ??= {};
  cfg.hooks.presets ??= [];
  if (!Array.isArray(cfg.hooks.presets)) throw new ConfigError([{ path: 'hooks.presets', message: 'must be a list to add email to it' }]);
  if (!cfg.hooks.presets.includes('email')) cfg.hooks.presets.push('email');
  const imap = { ...cfg.hooks.email?.imap, ...settings.imap };
  if (settings.imap.passwordEnv !== undefined) delete imap.passwordFile;
  else delete imap.passwordEnv;
  cfg.hooks.email = { ...cfg.hooks.email, ...settings, imap };
  if (settings.hookUrl === undefined) delete cfg.hooks.email.hookUrl;
  const next = `${JSON.stringify(cfg, null, 2)}\n`;
  // Same content, other whitespace: leave the user's file alone.
  return text.trim() && JSON.stringify(JSON.parse(text)) === JSON.stringify(cfg) ? text : next;
}
