import { storeContract } from './contract/index.js';
import { postgresHarness } from './contract/harness.js';

describe('store/postgres: the store contract', function () {
  this.timeout(60000); // the first suite to run may start the test cluster (spec/support/postgres.ts)
  storeContract(postgresHarness('contract'));
});
