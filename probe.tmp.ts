import { startEtcdCluster } from './test/helpers/etcd.ts';
for (let i = 0; i < 10; i++) {
  const t0 = Date.now();
  let timer: NodeJS.Timeout;
  const c = await Promise.race([
    startEtcdCluster(3),
    new Promise<null>((r) => {
      timer = setTimeout(() => r(null), 45000);
    }),
  ]);
  clearTimeout(timer!);
  console.log(i, c ? `up in ${Date.now() - t0}` : 'TIMEOUT');
  if (c) await c.destroy();
  else {
    const { execSync } = await import('node:child_process');
    console.log(execSync('pgrep -a etcd; ls -la /tmp | grep etcd- | tail -3').toString());
    process.exit(1);
  }
}
