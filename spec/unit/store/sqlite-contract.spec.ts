import { storeContract } from './contract/index.js';
import { sqliteHarness } from './contract/harness.js';

describe('store/sqlite: the store contract', () => {
  storeContract(sqliteHarness());
});
