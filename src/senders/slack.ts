import { HookError } from '../errors.js';
import { json, type Handshake } from './handshake.js';

/** Slack's signed `{"type":"url_verification","challenge":C}`: `{"challenge":C}`. https://api.slack.com/events/url_verification */
export const handshake: Handshake = {
  method: 'POST',
  check: 'signature',
  is: (req) => req.json()?.type === 'url_verification',
  answer(req) {
    const challenge = req.json()!.challenge;
    if (typeof challenge !== 'string') throw new HookError('invalid_payload', 'challenge must be a string: Slack\'s url_verification sends the challenge to echo');
    return json({ challenge });
  },
};
