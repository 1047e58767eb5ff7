import { after, before, describe, it } from 'node:test';
import { storeConformance } from '../src/conformance.ts';
import { needsPostgres, startCluster, storePackage, type Cluster } from './helpers/postgres.ts';

// The PostgreSQL store against the store contract the file store passes (test/store-conformance.test.ts),
// with two stores open on each catalogue: every rule holds with writers in two processes' places.
describe('PostgreSQL store', needsPostgres(), () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster?.remove());

  storeConformance(
    'PostgreSQL',
    {
      shared: true,
      async catalogue() {
        const url = await cluster.createDatabase();
        const { openPostgresStore } = await storePackage();
        return {
          open: () => openPostgresStore(url, {}),
          opener: { module: new URL('./fixtures/open-postgres-store.ts', import.meta.url).href, arg: url, execArgv: ['--import', 'tsx'] },
          remove: async () => {},
        };
      },
    },
    { describe, it },
  );
});
