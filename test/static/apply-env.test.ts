/**
 * POST /api/static/apply with `${VAR}` in Gerbil's `ports:` (API.md §4.20): the variables come from
 * the `.env` beside the compose file and `${VAR:-default}`, as docker compose takes them; the new
 * Gerbil on a private dockerd publishes the resolved ports, and an edit of `.env` alone is applied.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { finished, stepOf, type Job } from '../containers/update-support.ts';
import { applyHarness, bindingsOf, createPair, engineTests, OLD_PORTS } from './apply-support.ts';

const { engineTest } = engineTests('static apply with compose variables');

const PORTS = ['${WG_PORT}:${WG_PORT}/udp', '${HTTPS_PORT:-443}:443', '80:80', '${SSH_PORT}:22'];

engineTest(
  'gerbil is recreated with the ports the .env file and the defaults give; a .env edit is applied too',
  async (t) => {
    const { docker } = t.context.engine!;
    const h = await applyHarness(t, t.context.engine!, PORTS);
    const envFile = path.join(path.dirname(h.composeFile), '.env');
    await writeFile(envFile, '# Pangolin stack\nWG_PORT=51820\nSSH_PORT="2222"\n');
    const old = await createPair(docker, h, OLD_PORTS);
    // the static config's tcp-2222 is listed, so the entry point wait ends at once
    h.traefik.lists.entrypoints.push({ name: 'tcp-2222', address: ':2222/tcp' });

    const run = async () => {
      const reply = await h.app.inject({ method: 'POST', url: '/api/static/apply', payload: { services: ['gerbil'] } });
      t.is(reply.statusCode, 202, reply.body);
      const job = await finished(h.app, (reply.json() as Job).id);
      t.is(job.status, 'succeeded', JSON.stringify(job, null, 1));
      return job;
    };

    const first = await run();
    const resolved = ['51820:51820/udp', '443:443', '80:80', '2222:22'];
    t.regex(stepOf(first, 'gerbil', 'create')!.message, /published ports .*2222 → 22\/tcp/);
    const gerbil = await docker.getContainer('gerbil').inspect();
    t.not(gerbil.Id, old.gerbil.Id, 'a new gerbil');
    t.deepEqual(gerbil.HostConfig.PortBindings, bindingsOf(resolved));
    t.truthy((gerbil.Config.ExposedPorts as Record<string, unknown>)['22/tcp']);

    // nothing changed: the second apply recreates nothing
    const same = await run();
    t.regex(stepOf(same, 'gerbil', 'rename')!.message, /already publishes the ports of the compose file/);

    // only .env changes: the next apply publishes the new values
    await writeFile(envFile, 'WG_PORT=51821\nSSH_PORT=2223\nHTTPS_PORT=8443\n');
    await run();
    const again = await docker.getContainer('gerbil').inspect();
    t.not(again.Id, gerbil.Id);
    t.deepEqual(again.HostConfig.PortBindings, bindingsOf(['51821:51821/udp', '8443:443', '80:80', '2223:22']));
    const traefik = await docker.getContainer('traefik').inspect();
    t.is(traefik.HostConfig.NetworkMode, `container:${again.Id}`, 'traefik joins the new gerbil');
  },
);
