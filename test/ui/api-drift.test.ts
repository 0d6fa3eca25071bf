/**
 * The UI's generated API types (ui/src/api/schema.d.ts) must match the server's OpenAPI document:
 * a route or field changed on the server without `npm run gen:api` fails here, not in a browser.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { openapiDocument } from '../../ui/scripts/openapi-document.ts';
import { renderSchemaTypes } from '../../ui/scripts/render-schema.ts';

const SCHEMA = path.join(import.meta.dirname, '..', '..', 'ui', 'src', 'api', 'schema.d.ts');

test('ui/src/api/schema.d.ts is generated from the current OpenAPI document (run `npm run gen:api` when this fails)', async (t) => {
  t.timeout(300_000);
  const [committed, fresh] = await Promise.all([readFile(SCHEMA, 'utf8'), openapiDocument().then(renderSchemaTypes)]);
  if (committed === fresh) return t.pass();
  const a = committed.split('\n');
  const b = fresh.split('\n');
  let line = 0;
  while (line < a.length && a[line] === b[line]) line++;
  t.fail(
    `schema.d.ts is out of date from line ${line + 1}: committed ${JSON.stringify(a[line])}, server ${JSON.stringify(b[line])}. Run \`npm run gen:api\`.`,
  );
});
