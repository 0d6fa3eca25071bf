/**
 * middleware-manager databases made in the test with sql.js. The tables are those of its
 * database/migrations.sql (hhftechnology/middleware-manager, commit 7a483d90078317ab01f53d66adf2370608c66bf9):
 * the columns the import reads, with their types and defaults; `legacy` is an older layout (before
 * the services tables and mtls columns; router priority default 200).
 */
import initSqlJs from 'sql.js';

const MIDDLEWARES = `CREATE TABLE middlewares (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, config TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`;
const RESOURCES = (legacy: boolean) => `CREATE TABLE resources (
  id TEXT PRIMARY KEY, host TEXT NOT NULL, service_id TEXT NOT NULL, org_id TEXT NOT NULL, site_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  entrypoints TEXT DEFAULT 'websecure', tls_domains TEXT DEFAULT '',
  tcp_enabled INTEGER DEFAULT 0, tcp_entrypoints TEXT DEFAULT 'tcp', tcp_sni_rule TEXT DEFAULT '',
  custom_headers TEXT DEFAULT '',
  ${
    legacy
      ? ''
      : `mtls_rules TEXT DEFAULT '', mtls_request_headers TEXT DEFAULT '', mtls_reject_message TEXT DEFAULT '',
  mtls_reject_code INTEGER DEFAULT 403, mtls_refresh_interval TEXT DEFAULT '', mtls_external_data TEXT DEFAULT '',`
  }
  router_priority INTEGER DEFAULT ${legacy ? 200 : 100}, source_type TEXT DEFAULT '',
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`;
const RESOURCE_MIDDLEWARES = (legacy: boolean) => `CREATE TABLE resource_middlewares (
  resource_id TEXT NOT NULL, middleware_id TEXT NOT NULL, priority INTEGER NOT NULL DEFAULT ${legacy ? 200 : 100},
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (resource_id, middleware_id),
  FOREIGN KEY (resource_id) REFERENCES resources(id) ON DELETE CASCADE,
  FOREIGN KEY (middleware_id) REFERENCES middlewares(id) ON DELETE CASCADE)`;
const SERVICES = `CREATE TABLE services (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, config TEXT NOT NULL,
  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`;
const RESOURCE_SERVICES = `CREATE TABLE resource_services (
  resource_id TEXT NOT NULL, service_id TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (resource_id, service_id),
  FOREIGN KEY (resource_id) REFERENCES resources(id) ON DELETE CASCADE,
  FOREIGN KEY (service_id) REFERENCES services(id) ON DELETE CASCADE)`;

export interface MmContent {
  middlewares?: Array<{ id: string; name: string; type: string; config: unknown }>;
  services?: Array<{ id: string; name: string; type: string; config: unknown }>;
  /** other columns take their defaults */
  resources?: Array<{ id: string; host: string } & Record<string, string | number>>;
  assignments?: Array<{ resource_id: string; middleware_id: string; priority?: number }>;
  serviceAssignments?: Array<{ resource_id: string; service_id: string }>;
  legacy?: boolean;
}

/** A database file with `content`, as middleware-manager would have written it. */
export async function mmDatabase(content: MmContent): Promise<Buffer> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  const legacy = content.legacy ?? false;
  db.run(MIDDLEWARES);
  db.run(RESOURCES(legacy));
  db.run(RESOURCE_MIDDLEWARES(legacy));
  if (!legacy) {
    db.run(SERVICES);
    db.run(RESOURCE_SERVICES);
  }
  const json = (config: unknown) => (typeof config === 'string' ? config : JSON.stringify(config));
  for (const m of content.middlewares ?? [])
    db.run('INSERT INTO middlewares (id, name, type, config) VALUES (?, ?, ?, ?)', [
      m.id,
      m.name,
      m.type,
      json(m.config),
    ]);
  for (const s of content.services ?? [])
    db.run('INSERT INTO services (id, name, type, config) VALUES (?, ?, ?, ?)', [s.id, s.name, s.type, json(s.config)]);
  for (const r of content.resources ?? []) {
    const row: Record<string, string | number> = {
      service_id: `${r.id}-service`,
      org_id: 'org',
      site_id: 'site',
      ...r,
    };
    const columns = Object.keys(row);
    db.run(
      `INSERT INTO resources (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
      columns.map((c) => row[c]),
    );
  }
  for (const a of content.assignments ?? [])
    db.run(
      `INSERT INTO resource_middlewares (resource_id, middleware_id${a.priority === undefined ? '' : ', priority'}) VALUES (?, ?${a.priority === undefined ? '' : ', ?'})`,
      a.priority === undefined ? [a.resource_id, a.middleware_id] : [a.resource_id, a.middleware_id, a.priority],
    );
  for (const a of content.serviceAssignments ?? [])
    db.run('INSERT INTO resource_services (resource_id, service_id) VALUES (?, ?)', [a.resource_id, a.service_id]);
  const bytes = Buffer.from(db.export());
  db.close();
  return bytes;
}

/** A SQLite database of other tables (not middleware-manager's). */
export async function otherDatabase(): Promise<Buffer> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
  db.run('CREATE TABLE middlewares (id TEXT PRIMARY KEY, label TEXT)');
  const bytes = Buffer.from(db.export());
  db.close();
  return bytes;
}
