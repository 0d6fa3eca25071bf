import type { Row } from './types.ts';
export async function backupRow(_options: Record<string, unknown>): Promise<Row[]> { return []; }
