import { Busboy } from '@fastify/busboy';
import { HookError } from '../errors.js';
import { isPrototypeKey } from '../engine/prototype-keys.js';
import { addField } from './payload.js';

/** Parts a multipart form may have (a SendGrid mail has about 20); more is 413. */
const MAX_FORM_PARTS = 1000;
/** Files a multipart form may carry; more is 413 (SendGrid sends one part per attachment). */
const MAX_FORM_FILES = 100;

/** What a payload keeps of one uploaded file (CONTRACT.md §12): never its contents. */
interface FormFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
}

export function isMultipart(contentType: string | undefined): contentType is string {
  return contentType !== undefined && /^\s*multipart\/form-data\s*(;|$)/i.test(contentType);
}

/** A `multipart/form-data` body as its fields plus `files: [{field, filename, contentType, size}]` (CONTRACT.md §12); no part cut below `maxBytes`. */
export function parseMultipart(raw: Buffer, contentType: string, maxBytes: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let form: ReturnType<typeof Busboy>;
    try {
      form = Busboy({
        headers: { 'content-type': contentType },
        limits: { parts: MAX_FORM_PARTS, files: MAX_FORM_FILES, fieldNameSize: maxBytes, fieldSize: maxBytes, fileSize: maxBytes },
      });
    } catch {
      // Busboy's only constructor error for a multipart type: "Multipart: Boundary not found".
      reject(new HookError('invalid_json', 'the multipart/form-data body cannot be read: its Content-Type has no boundary parameter'));
      return;
    }
    const fields: Record<string, string | string[]> = Object.create(null);
    const files: FormFile[] = [];
    let failed = false;
    const fail = (err: HookError) => {
      if (failed) return;
      failed = true;
      reject(err);
    };
    form.on('field', (name, value) => {
      if (isPrototypeKey(name)) return;
      if (name === 'files') return fail(new HookError('invalid_payload', 'body: a form field is named "files", which holds the list of uploaded files: rename the field'));
      addField(fields, name, value);
    });
    form.on('file', (field, stream, filename, _encoding, mimeType) => {
      const file: FormFile = { field, filename: filename ?? '', contentType: mimeType, size: 0 };
      files.push(file);
      stream.on('data', (chunk: Buffer) => { file.size += chunk.length; });
    });
    form.on('partsLimit', () => fail(new HookError('payload_too_large', `the form has more than ${MAX_FORM_PARTS} parts (fields and files): send fewer fields`)));
    form.on('filesLimit', () => fail(new HookError('payload_too_large', `the form has more than ${MAX_FORM_FILES} files: send fewer attachments`)));
    form.on('error', (err: unknown) => {
      // Busboy's messages name what is wrong with the framing ("Unexpected end of multipart data"), never the content.
      const why = err instanceof Error ? `: ${err.message}` : '';
      fail(new HookError('invalid_json', `the multipart/form-data body cannot be read${why}`));
    });
    form.on('finish', () => {
      if (!failed) resolve({ ...fields, files });
    });
    form.end(raw);
  });
}
