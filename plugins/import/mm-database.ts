/**
 * Reads middleware-manager's SQLite database (hhftechnology/middleware-manager, database/migrations.sql
 * at commit 7a483d90078317ab01f53d66adf2370608c66bf9 and the ALTER TABLEs of database/db.go) with
 * sql.js: SQLite compiled to WebAssembly, so no native build is needed on any Node version.
 */
import { createRequire } from 'node:module';
import initSqlJs, { type Database, type SqlJsStatic, type SqlValue } from 'sql.js';
import { importErrors } from './errors.ts';

/** One row of `middlewares`: `config` is the JSON text of the body under the type key. */
export interface MmMiddleware {
  id: string;
  name: string;
  type: string;
  config: string;
}

/** One row of `services` (newer databases only): same shape as a middleware. */
export type MmService = MmMiddleware;

/** One row of `resources`; columns added by later migrations are null when the database predates them. */
export interface MmResource {
  id: string;
  host: string;
  status: string | null;
  entrypoints: string | null;
  tls_domains: string | null;
  tcp_enabled: number | null;
  tcp_entrypoints: string | null;
  tcp_sni_rule: string | null;
  custom_headers: string | null;
  router_priority: number | null;
  mtls_rules: string | null;
  mtls_request_headers: string | null;
  mtls_reject_message: string | null;
  mtls_reject_code: number | null;
  mtls_refresh_interval: string | null;
  mtls_external_data: string | null;
}

export interface MmAssignment {
  resource_id: string;
  middleware_id: string;
  priority: number | null;
}

export interface MmServiceAssignment {
  resource_id: string;
  service_id: string;
}

/** Everything the import reads, plus what the reader noticed (WAL mode, missing optional tables). */
export interface MmDatabase {
  middlewares: MmMiddleware[];
  services: MmService[];
  resources: MmResource[];
  assignments: MmAssignment[];
  serviceAssignments: MmServiceAssignment[];
  warnings: string[];
}

/** Tables and columns without which the file is not a middleware-manager database. */
const REQUIRED: Record<string, string[]> = {
  middlewares: ['id', 'name', 'type', 'config'],
  resources: ['id', 'host'],
  resource_middlewares: ['resource_id', 'middleware_id'],
};
/** Tables of newer versions (services since v2); their absence is a warning. */
const OPTIONAL: Record<string, string[]> = {
  services: ['id', 'name', 'type', 'config'],
  resource_services: ['resource_id', 'service_id'],
};
const RESOURCE_COLUMNS = [
  'status',
  'entrypoints',
  'tls_domains',
  'tcp_enabled',
  'tcp_entrypoints',
  'tcp_sni_rule',
  'custom_headers',
  'router_priority',
  'mtls_rules',
  'mtls_request_headers',
  'mtls_reject_message',
  'mtls_reject_code',
  'mtls_refresh_interval',
  'mtls_external_data',
] as const;

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Loads the WebAssembly module once per reader (a few ms; the .wasm ships inside the npm package). */
export class MmDatabaseReader {
  private engine: Promise<SqlJsStatic> | null = null;

  /** Parses `bytes`; 422 `invalid_database` naming what is wrong or missing. */
  async read(bytes: Buffer): Promise<MmDatabase> {
    if (bytes.length < 100 || !bytes.subarray(0, 16).equals(HEADER))
      throw importErrors.invalidDatabase('the body is not a SQLite database (no "SQLite format 3" header)');
    const warnings: string[] = [];
    // bytes 18/19 = 2: WAL mode; what is still in the -wal file beside it is not in the upload
    if (bytes[18] === 2 || bytes[19] === 2)
      warnings.push(
        'the database is in WAL mode: changes still in its -wal file are not in this upload; copy it while middleware-manager is stopped (or after PRAGMA wal_checkpoint) to include them',
      );
    const SQL = await this.sqlJs();
    let db: Database;
    try {
      db = new SQL.Database(bytes);
    } catch (err) {
      throw importErrors.invalidDatabase(`SQLite cannot open it: ${(err as Error).message}`);
    }
    try {
      const columns = tableColumns(db);
      const missing: string[] = [];
      for (const [table, needed] of Object.entries(REQUIRED)) {
        const have = columns.get(table);
        if (!have) missing.push(`table ${table}`);
        else for (const column of needed) if (!have.has(column)) missing.push(`column ${table}.${column}`);
      }
      if (missing.length > 0)
        throw importErrors.invalidDatabase(
          `not a middleware-manager database: missing ${missing.join(', ')}`,
          missing.map((what) => ({ path: '/body', message: `missing ${what}` })),
        );
      const optional = (table: string) =>
        OPTIONAL[table].every((c) => columns.get(table)?.has(c)) ? true : (warnings.push(noTable(table)), false);
      const resourceColumns = columns.get('resources')!;
      const pick = RESOURCE_COLUMNS.map((c) => (resourceColumns.has(c) ? `"${c}"` : `NULL AS "${c}"`)).join(', ');
      const hasPriority = columns.get('resource_middlewares')!.has('priority');
      return {
        middlewares: rows<MmMiddleware>(db, 'SELECT id, name, type, config FROM middlewares ORDER BY id'),
        services: optional('services')
          ? rows<MmService>(db, 'SELECT id, name, type, config FROM services ORDER BY id')
          : [],
        resources: rows<MmResource>(db, `SELECT id, host, ${pick} FROM resources ORDER BY id`),
        assignments: rows<MmAssignment>(
          db,
          `SELECT resource_id, middleware_id, ${hasPriority ? 'priority' : 'NULL AS priority'} FROM resource_middlewares ORDER BY resource_id, middleware_id`,
        ),
        serviceAssignments: optional('resource_services')
          ? rows<MmServiceAssignment>(
              db,
              'SELECT resource_id, service_id FROM resource_services ORDER BY resource_id, service_id',
            )
          : [],
        warnings,
      };
    } catch (err) {
      if ((err as { id?: string }).id === 'invalid_database') throw err;
      // a damaged page shows up only when a query reaches it
      throw importErrors.invalidDatabase(`SQLite cannot read it: ${(err as Error).message}`);
    } finally {
      db.close();
    }
  }

  private sqlJs(): Promise<SqlJsStatic> {
    if (!this.engine) {
      // the package's own resolution finds dist/sql-wasm.wasm wherever npm put it
      const wasm = createRequire(import.meta.url).resolve('sql.js/dist/sql-wasm.wasm');
      this.engine = initSqlJs({ locateFile: () => wasm });
    }
    return this.engine;
  }
}

const noTable = (table: string) =>
  `no ${table} table (a middleware-manager older than its services support): nothing of it is imported`;

/** Table name → its column names (sqlite_master + PRAGMA table_info). */
function tableColumns(db: Database): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const tables = db.exec("SELECT name FROM sqlite_master WHERE type = 'table'")[0]?.values ?? [];
  for (const [name] of tables) {
    const info = db.exec(`PRAGMA table_info("${String(name).replaceAll('"', '""')}")`)[0]?.values ?? [];
    out.set(String(name), new Set(info.map((row) => String(row[1]))));
  }
  return out;
}

/** Rows as objects; SQLite's loose typing is narrowed to string | number | null (blobs become text). */
function rows<T>(db: Database, sql: string): T[] {
  const result = db.exec(sql)[0];
  if (!result) return [];
  return result.values.map(
    (values) => Object.fromEntries(result.columns.map((column, i) => [column, scalar(values[i])])) as T,
  );
}

function scalar(value: SqlValue): string | number | null {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return value;
}
