/** Schemas of GET /api/system/plugins (API.md §4.16, §6) and GET /api/system/cluster (docs/API.md "Cluster"). */
import { Type } from '@sinclair/typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const ExtPlugin = Type.Object(
  {
    name: Type.String(),
    dir: Nullable(
      Type.String({ description: 'directory name inside PLUGINS_DIR; null for an enabled name without a directory' }),
    ),
    version: Nullable(Type.String()),
    api_version: Nullable(Type.String({ description: 'semver range of the host API the plugin needs' })),
    prefix: Type.String(),
    status: Type.Union(['loaded', 'failed', 'disabled', 'incompatible'].map((s) => Type.Literal(s))),
    error: Type.Union([Type.Object({ message: Type.String(), stack: Nullable(Type.String()) }), Type.Null()]),
    routes: Type.Array(Type.Object({ method: Type.String(), url: Type.String() })),
    loaded_at: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'ExtPlugin' },
);

export const ExtPluginList = Type.Array(ExtPlugin);

export const ClusterStatus = Type.Object(
  {
    enabled: Type.Boolean({ description: 'false: a standalone server (no cluster.etcd_endpoints)' }),
    node: Type.String(),
    is_leader: Type.Boolean({ description: 'this node runs the singleton work (discovery writes, scheduled backups)' }),
    leader: Nullable(Type.String({ description: "the leader's node name; null: none right now or etcd unreachable" })),
    leader_since: Nullable(Type.String({ format: 'date-time' })),
    etcd: Type.Object({
      endpoints: Type.Array(Type.String()),
      reachable: Type.Union([Type.Boolean(), Type.Null()]),
      error: Nullable(Type.String()),
    }),
    revision: Type.Union([Type.Number(), Type.Null()], {
      description: 'the last etcd revision this node applied to its data dir; null when standalone',
    }),
  },
  { $id: 'ClusterStatus' },
);
