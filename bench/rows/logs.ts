import type { Row } from './types.ts';
export async function logsRow(_options: Record<string, unknown>): Promise<Row[]> { return []; }
