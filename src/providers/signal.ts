import { obj, str } from '../schema-node.js';
import { url, type ProviderSpec } from './spec.js';

export const signal: ProviderSpec<'signal'> = {
  name: 'signal',
  schema: obj('A signal-cli REST API server.', {
    number: str('The registered sender number, e.g. +4915112345678.', ''),
    apiBase: url('Base URL of the signal-cli REST API, e.g. http://127.0.0.1:8080.'),
  }, { required: ['apiBase'] }),
  limit: 4000,
  summary: 'Run [signal-cli-rest-api](https://github.com/bbernhard/signal-cli-rest-api) and register or link the sender number with it (`/v1/register` or `/v1/qrcodelink`). It has no password of its own: keep it on a private network. `to` is a phone number or a group id (`group.…` from `/v1/groups/<number>`).',
  example: 'providers:\n  signal:\n    number: "+4915112345678"\n    apiBase: http://127.0.0.1:8080',
  required: ['apiBase', 'number'],
};
