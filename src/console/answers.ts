import { answer, answerBody } from '../http/answer.js';
import type { Exchange } from '../http/exchange.js';
import type { Html } from './html.js';

/** Answers with a console page (through the listener's one answer(), http/answer.ts). */
export function answerPage(ex: Exchange, status: number, page: Html): void {
  answerBody(ex, status, 'text/html; charset=utf-8', page.text);
}

/** 303: after a POST the browser GETs the target (RFC 9110 §15.4.4); an empty text body, as Koa's ctx.redirect() sends. */
export function redirect(ex: Exchange, location: string): void {
  answer(ex, 303, { location, 'content-type': 'text/plain; charset=utf-8', 'content-length': '0' }, '');
}
