/** The synthetic stack the benchmarks share: N Pangolin resources, one middleware assigned to each. */
import { stringify } from 'yaml';

/** A Pangolin HTTP-provider body with N HTTP resources (router + redirect + service each). */
export function pangolinBody(n: number): string {
  const routers: Record<string, unknown> = {};
  const services: Record<string, unknown> = {};
  for (let i = 1; i <= n; i++) {
    const host = `app${i}.example.com`;
    routers[`${i}-App-${i}-router`] = { entryPoints: ['websecure'], middlewares: ['badger'], priority: 100, rule: `Host(\`${host}\`)`, service: `${i}-App-${i}-service`, tls: { certResolver: 'letsencrypt' } };
    routers[`${i}-App-${i}-router-redirect`] = { entryPoints: ['web'], middlewares: ['redirect-to-https'], rule: `Host(\`${host}\`)`, service: `${i}-App-${i}-service` };
    services[`${i}-App-${i}-service`] = { loadBalancer: { servers: [{ url: `http://100.89.128.${4 * (i % 60) + 4}:${40000 + (i % 25000)}` }] } };
  }
  return JSON.stringify({ http: {
    middlewares: { badger: { plugin: { badger: { apiBaseUrl: 'http://pangolin:3001/api/v1', userSessionCookieName: 'p_session_token' } } }, 'redirect-to-https': { redirectScheme: { scheme: 'https' } } },
    routers, services,
  } });
}

export const middlewareYaml = (i: number, average: number): string => stringify({ name: `Rate limit ${i}`, type: 'rateLimit', config: { average, burst: 50 } });

/** resources/<id>.yaml as a GitOps user writes it: the router it belongs to and one assignment. */
export const resourceYaml = (i: number): string => stringify({
  name: `${i}-App-${i}-router`, router: `${i}-App-${i}-router@http`, source: 'pangolin', status: 'active', rule: `Host(\`app${i}.example.com\`)`,
  middlewares: [{ id: `rl-${i}`, priority: 100 }],
});
