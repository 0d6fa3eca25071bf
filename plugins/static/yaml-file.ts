/**
 * YAML files edited as documents (API.md §4.20): comments and key order stay (the `yaml` package's
 * Document API, as plugins/plugins/static-config-edit.ts), one `<file>.bak` keeps the previous bytes,
 * and each file is replaced atomically. Several files are saved together or not at all: when a later
 * write fails, the files already written get their previous bytes back.
 */
import { access, constants, rm } from 'node:fs/promises';
import path from 'node:path';
import { writeAtomic } from '../../core/store/atomic-write.ts';
import { loadYamlDocumentFile, YAML_STRINGIFY, type YamlDocumentFile } from '../../model/yaml-document-file.ts';
import { staticErrors } from './errors.ts';

export { ensureMap, lineOf, mapAt, rootOf } from '../../model/yaml-document-file.ts';

export interface YamlFile extends YamlDocumentFile {
  /** what the file is, for messages: "Traefik static config", "compose file" */
  label: string;
}

/** Reads and parses `file`; a missing file is an empty document unless `mustExist`; anything unusable → 409. */
export async function loadYamlFile(label: string, file: string, mustExist: boolean): Promise<YamlFile> {
  const loaded = await loadYamlDocumentFile(file, mustExist, {
    unusable: (line, reason) => staticErrors.fileUnusable(label, file, line, reason),
    notMapping: (where, line) => staticErrors.notMapping(label, file, where, line),
  });
  return { ...loaded, label };
}

/** 409 unless the file (or, when missing, its directory) is writable: checked before any file is written. */
async function checkWritable(loaded: YamlFile): Promise<void> {
  const target = loaded.text === null ? path.dirname(loaded.file) : loaded.file;
  try {
    await access(target, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw staticErrors.fileUnusable(loaded.label, loaded.file, null, `cannot be written (${code})`);
  }
}

/**
 * Saves the edited documents: each file's previous bytes to `<file>.bak`, then the new bytes
 * atomically. All or nothing: a failed write puts back the files already written (their bytes, or
 * no file when there was none) and answers 409.
 */
export async function saveYamlFiles(files: YamlFile[]): Promise<{ backups: string[] }> {
  for (const loaded of files) await checkWritable(loaded);
  const rendered = files.map((loaded) => loaded.doc.toString(YAML_STRINGIFY));
  const written: YamlFile[] = [];
  const backups: string[] = [];
  let current = files[0];
  try {
    for (const [index, loaded] of files.entries()) {
      current = loaded;
      if (loaded.text !== null) {
        await writeAtomic(`${loaded.file}.bak`, loaded.text, { mode: loaded.mode });
        backups.push(`${loaded.file}.bak`);
      }
      written.push(loaded);
      await writeAtomic(loaded.file, rendered[index], { mode: loaded.mode });
    }
  } catch (err) {
    for (const loaded of written) await restore(loaded);
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw staticErrors.fileUnusable(current.label, current.file, null, `cannot be written (${code})`);
  }
  return { backups };
}

/** Puts a file's previous bytes back (best effort: the write that failed is what the answer reports). */
async function restore(loaded: YamlFile): Promise<void> {
  try {
    if (loaded.text !== null) await writeAtomic(loaded.file, loaded.text, { mode: loaded.mode });
    else await rm(loaded.file, { force: true });
  } catch {
    // nothing more can be done; the .bak holds the previous bytes
  }
}
