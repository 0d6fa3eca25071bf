/** Entry point (`npm start`): serves the built-in groups with the settings of config/ and the environment. */
import { runServer } from '../core/server.ts';
import { builtinGroups } from './index.ts';

await runServer(builtinGroups);
