import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED } from '../helpers/shared.ts';
import { DEFAULT_TRAEFIK_SCHEMA_PATH } from '../../model/traefik-schema.ts';

test('the Traefik schema shipped in config/schemas is the one of the shared contract', (t) => {
  const shipped = readFileSync(DEFAULT_TRAEFIK_SCHEMA_PATH);
  const contract = readFileSync(path.join(SHARED, 'schemas', 'traefik-v3-file-provider.json'));
  t.true(shipped.equals(contract));
});
