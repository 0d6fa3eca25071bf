/** Entry point (`npm start`): serves the built-in groups with the settings of config/ and the environment. */
import { runServer } from '../core/server.ts';

// the groups (and everything they import) load after the server listens: until then it already
// serves the last run's provider config from data/.cache (issue 11)
await runServer(async () => (await import('./index.ts')).builtinGroups);
