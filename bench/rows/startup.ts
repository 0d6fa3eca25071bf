import type { Row } from './types.ts';
export async function startupRow(_options: Record<string, unknown>): Promise<Row[]> { return []; }
