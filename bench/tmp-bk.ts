import { backupRow } from './rows/backup.ts';
console.log(await backupRow({ resources: 2000, rounds: 1 }));
