/**
 * The provider side of core/config-snapshot.ts: every new generation's JSON is saved to data/.cache
 * (latest wins, one write at a time), and at startup the saved one is served, stale, until the first
 * generation from current inputs exists (issue 11; /api/proxy-config/status says `starting` then).
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { readConfigSnapshot, writeConfigSnapshot } from '../../core/config-snapshot.ts';
import { etagOf, serializeYaml } from './serialize.ts';
import type { Encoded, Generation } from './service.ts';

const gzipAsync = promisify(gzip);
const GZIP_MIN_BYTES = 1024;

/** What the GET route needs of a generation: a real one or the saved one. */
export interface Servable {
  readonly json: Encoded;
  readonly yaml: Encoded;
  readonly generatedAt: string;
}

/** The saved generation of the last run, served stale; YAML is derived from its JSON on demand. */
export class SavedGeneration implements Servable {
  private yamlForm: Encoded | null = null;

  constructor(
    readonly json: Encoded,
    readonly generatedAt: string,
  ) {}

  get yaml(): Encoded {
    if (!this.yamlForm) {
      const body = serializeYaml(JSON.parse(this.json.body.toString('utf8')));
      this.yamlForm = { body, etag: etagOf(body), gzip: null };
    }
    return this.yamlForm;
  }
}

/** The last run's config, or null; its gzip form is filled in on the thread pool. */
export async function loadSaved(dataDir: string): Promise<SavedGeneration | null> {
  const snapshot = await readConfigSnapshot(dataDir);
  if (!snapshot) return null;
  const saved = new SavedGeneration({ body: snapshot.body, etag: snapshot.etag, gzip: null }, snapshot.generatedAt);
  if (snapshot.body.length > GZIP_MIN_BYTES)
    gzipAsync(snapshot.body).then(
      (z) => {
        saved.json.gzip = z;
      },
      () => undefined,
    );
  return saved;
}

/** Saves generations to the cache, coalescing: at most one write in flight, then the latest. */
export class SnapshotWriter {
  private latest: Generation | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  save(generation: Generation): void {
    this.latest = generation;
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
  }

  /** Resolves once every requested write is done (close, tests). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.latest) {
      const generation = this.latest;
      this.latest = null;
      await writeConfigSnapshot(this.dataDir, {
        etag: generation.json.etag,
        generatedAt: generation.generatedAt,
        body: generation.json.body,
      }).catch(this.onError);
    }
  }
}
