import type { SenderDescriptor } from './descriptor.js';
import { asana } from './asana.js';
import { calendly } from './calendly.js';
import { clerk } from './clerk.js';
import { discord } from './discord.js';
import { dropbox } from './dropbox.js';
import { github } from './github.js';
import { gitlab } from './gitlab.js';
import { hmac } from './hmac.js';
import { hubspot } from './hubspot.js';
import { linear } from './linear.js';
import { mailgun } from './mailgun.js';
import { meta } from './meta.js';
import { msgraph } from './msgraph.js';
import { openai } from './openai.js';
import { paddle } from './paddle.js';
import { pagerduty } from './pagerduty.js';
import { postmark } from './postmark.js';
import { replicate } from './replicate.js';
import { resend } from './resend.js';
import { sendgrid } from './sendgrid.js';
import { sentry } from './sentry.js';
import { shopify } from './shopify.js';
import { slack } from './slack.js';
import { square } from './square.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripe } from './stripe.js';
import { telegram } from './telegram.js';
import { twilio } from './twilio.js';
import { twitch } from './twitch.js';
import { zoom } from './zoom.js';

/** Every `verify.scheme` (CONTRACT.md §8, §15), in the order of the docs: config/ derives the scheme list and its checks from it. */
export const SENDERS: readonly SenderDescriptor[] = [
  github, stripe, slack, meta, shopify, twilio, sendgrid, square, hubspot, linear, paddle, gitlab, telegram, calendly, pagerduty, sentry, mailgun, postmark,
  discord, zoom, twitch, msgraph, dropbox, asana, clerk, resend, openai, replicate, standardWebhooks, hmac,
];

const BY_SCHEME = new Map(SENDERS.map((d) => [d.scheme, d]));

/** The descriptor of a scheme the loader accepted. */
export function sender(scheme: string): SenderDescriptor {
  const d = BY_SCHEME.get(scheme);
  if (d === undefined) throw new Error(`no sender descriptor for scheme ${scheme}`);
  return d;
}

/** The scheme names, for the config schema's `verify.scheme`. */
export const SCHEMES = SENDERS.map((d) => d.scheme) as [string, ...string[]];
