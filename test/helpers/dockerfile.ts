/**
 * A small Dockerfile reader for tests (no Docker engine builds images here): joins continuation
 * lines, drops comments, resolves `ARG` defaults in `FROM`, and splits the instructions by stage.
 */
import { readFileSync } from 'node:fs';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

/** The argument list of an exec-form instruction (`["a", "b"]`), or null for the shell form. */
export function execForm(args: string): string[] | null {
  const trimmed = args.trim();
  if (!trimmed.startsWith('[')) return null;
  const parsed = JSON.parse(trimmed) as unknown;
  return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : null;
}

export function parseDockerfile(file: string): { args: Record<string, string>; stages: Stage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || (line === '' && current === '')) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = '';
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword, ...rest] = line.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    if (instruction.keyword === 'ARG' && stages.length === 0) {
      const [name, value = ''] = instruction.args.split('=');
      args[name] = value;
    } else if (instruction.keyword === 'FROM') {
      const [image, as, name] = instruction.args.split(/\s+/);
      const resolved = image.replace(/\$\{?(\w+)\}?/g, (_m, arg: string) => args[arg] ?? '');
      stages.push({ image: resolved, name: as?.toUpperCase() === 'AS' ? name : null, instructions: [] });
    } else {
      if (stages.length === 0) throw new Error(`${file}: ${instruction.keyword} before the first FROM`);
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { args, stages };
}
