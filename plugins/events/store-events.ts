/**
 * Turns the store's change events into bus events: `object` for objects of collections and for
 * the configuration documents, `invalid_file` when the set of invalid data files changes.
 */
import path from 'node:path';
import type { AnyChangeEvent, InvalidFile, YamlStore } from '../../core/store/types.ts';
import type { EventHub } from './bus.ts';

/** Documents whose changes are not published: the token file is class A. */
const PRIVATE_DOCUMENTS = /^auth\//;
/** Third-party plugins' data (`ext/<name>`): their routes are class O, so are their events. */
const OPERATIONS_COLLECTIONS = /^ext\//;

/** Publishes store changes on the bus from `start()` on (startup scans are not news); returns the unsubscribe function. */
export function publishStoreChanges(store: YamlStore, bus: EventHub): { start(): void; stop(): void } {
  let invalid = new Map<string, string>();
  let started = false;
  const relative = (file: string) => path.relative(store.dataDir, file).split(path.sep).join('/');

  const onChange = (event: AnyChangeEvent) => {
    if (!started || event.source === 'startup') return;
    if (event.action) {
      const isDocument = event.id === undefined;
      if (!isDocument || !PRIVATE_DOCUMENTS.test(event.collection)) {
        bus.publish(
          'object',
          {
            collection: isDocument ? event.collection.replace(/\.ya?ml$/, '') : event.collection,
            id: event.id ?? null,
            action: event.action,
            source: event.source,
            etag: event.etag ?? null,
          },
          OPERATIONS_COLLECTIONS.test(event.collection),
        );
      }
    }
    invalid = publishInvalidChanges(invalid, store.invalidFiles(), relative, bus);
  };
  const unsubscribe = store.onAnyChange(onChange);
  return {
    start() {
      invalid = new Map(store.invalidFiles().map((file) => [relative(file.path), keyOf(file)]));
      started = true;
    },
    stop: unsubscribe,
  };
}

const keyOf = (file: InvalidFile) => `${file.line}:${file.column}:${file.message}`;

/** Publishes files that became (or stay, with another error) invalid and those cleared; returns the new set. */
function publishInvalidChanges(
  before: Map<string, string>,
  now: InvalidFile[],
  relative: (file: string) => string,
  bus: EventHub,
): Map<string, string> {
  const after = new Map<string, string>();
  for (const file of now) {
    const rel = relative(file.path);
    const key = keyOf(file);
    after.set(rel, key);
    // the first line only: YAML parser messages go on with an excerpt of the file, which may hold a secret
    if (before.get(rel) !== key)
      bus.publish(
        'invalid_file',
        { path: rel, line: file.line, column: file.column, message: file.message.split('\n')[0].trim() },
        OPERATIONS_COLLECTIONS.test(rel),
      );
  }
  for (const rel of before.keys())
    if (!after.has(rel)) bus.publish('invalid_file', { path: rel, cleared: true }, OPERATIONS_COLLECTIONS.test(rel));
  return after;
}
