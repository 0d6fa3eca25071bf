/**
 * `npm run gen:api`: writes ui/src/api/schema.d.ts from the server's own OpenAPI document.
 * test/ui/api-drift.test.ts fails when the committed file no longer matches the server.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderSchemaTypes } from './render-schema.ts';
import { openapiDocument } from './openapi-document.ts';

export const SCHEMA_FILE = path.join(import.meta.dirname, '..', 'src', 'api', 'schema.d.ts');

const text = await renderSchemaTypes(await openapiDocument());
await writeFile(SCHEMA_FILE, text);
console.log(`wrote ${path.relative(process.cwd(), SCHEMA_FILE)} (${text.length} bytes)`);
