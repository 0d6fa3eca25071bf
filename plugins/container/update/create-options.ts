/**
 * The create request of a replacement container (API.md §4.11 `create`): the old container's
 * config, host config, networks, labels and restart policy, on the new image. What the old
 * container only inherited from its old image (env, labels, cmd, entrypoint, healthcheck, …) is
 * left out, so the new image's own values apply; what the user set explicitly is kept.
 */
import { isDeepStrictEqual } from 'node:util';
import type Docker from 'dockerode';

type ImageConfig = Partial<Docker.ImageInspectInfo['Config']>;

export interface RecreateRequest {
  create: Docker.ContainerCreateOptions;
  /** Networks beyond the first: API < 1.44 takes one endpoint at create, the rest are connected after. */
  connect: Array<{ network: string; endpoint: Docker.EndpointSettings }>;
}

/** Modes without endpoints of their own: nothing to attach. */
const NO_ENDPOINTS = /^(none|host|container:)/;

/** Entries of `own` that the image does not set to the same value. */
function withoutInherited(own: string[] | undefined, inherited: string[] | undefined): string[] | undefined {
  if (!own) return own;
  const image = new Set(inherited ?? []);
  return own.filter((entry) => !image.has(entry));
}

function withoutInheritedKeys<T>(
  own: Record<string, T> | undefined | null,
  inherited: Record<string, T> | undefined | null,
): Record<string, T> | undefined {
  if (!own) return undefined;
  return Object.fromEntries(
    Object.entries(own).filter(
      ([key, value]) => !inherited || !(key in inherited) || !isDeepStrictEqual(inherited[key], value),
    ),
  );
}

/** The Config part: the old one minus what came from the old image. */
function configFor(old: Docker.ContainerInspectInfo, oldImage: ImageConfig | null): Docker.ContainerCreateOptions {
  const config = structuredClone(old.Config) as unknown as Docker.ContainerCreateOptions & Record<string, unknown>;
  if (oldImage) {
    config.Env = withoutInherited(config.Env, oldImage.Env);
    config.Labels = withoutInheritedKeys(config.Labels, oldImage.Labels);
    config.ExposedPorts = withoutInheritedKeys(
      config.ExposedPorts,
      oldImage.ExposedPorts as Record<string, object> | undefined,
    );
    config.Volumes = withoutInheritedKeys(config.Volumes, oldImage.Volumes as Record<string, object> | undefined);
    for (const key of [
      'Cmd',
      'Entrypoint',
      'WorkingDir',
      'User',
      'Healthcheck',
      'StopSignal',
      'Shell',
      'OnBuild',
    ] as const) {
      if (isDeepStrictEqual(config[key] ?? null, (oldImage as Record<string, unknown>)[key] ?? null))
        delete config[key];
    }
  }
  // Docker's default hostname is the short container id: the new container gets its own
  if (config.Hostname === old.Id.slice(0, 12)) delete config.Hostname;
  return config;
}

/**
 * The request for the replacement of `old`, named `name`, running `old.Config.Image` (now the
 * new image). `networkMode` overrides `container:<id>` modes whose target was itself replaced.
 */
export function recreateRequest(
  old: Docker.ContainerInspectInfo,
  oldImage: ImageConfig | null,
  name: string,
  networkMode?: string,
): RecreateRequest {
  const create = configFor(old, oldImage);
  const hostConfig = structuredClone(old.HostConfig);
  if (networkMode) hostConfig.NetworkMode = networkMode;
  const mode = hostConfig.NetworkMode ?? 'default';
  if (mode.startsWith('container:')) {
    // Docker refuses these together with another container's network namespace
    delete create.Hostname;
    delete create.Domainname;
    delete create.MacAddress;
    delete create.ExposedPorts;
  }
  create.name = name;
  create.Image = old.Config.Image;
  create.HostConfig = hostConfig;

  const connect: RecreateRequest['connect'] = [];
  if (!NO_ENDPOINTS.test(mode)) {
    const shortId = old.Id.slice(0, 12);
    const endpoints = Object.entries(old.NetworkSettings?.Networks ?? {}).map(([network, settings]) => ({
      network,
      endpoint: {
        IPAMConfig: settings.IPAMConfig ?? undefined,
        Links: settings.Links ?? undefined,
        // Docker adds the short id as an alias: the new container gets its own
        Aliases: (settings.Aliases ?? []).filter((alias: string) => alias !== shortId),
      } as Docker.EndpointSettings,
    }));
    // the network the host config names goes first (create), the others are connected afterwards
    endpoints.sort((a, b) => Number(b.network === mode) - Number(a.network === mode));
    const [first, ...rest] = endpoints;
    if (first) create.NetworkingConfig = { EndpointsConfig: { [first.network]: first.endpoint } };
    connect.push(...rest);
  }
  return { create, connect };
}

/** The `container:<target>` a network mode names, else null. */
export const networkTargetOf = (mode: string | undefined): string | null =>
  mode?.startsWith('container:') ? mode.slice('container:'.length) : null;

/** Whether the image config declares a healthcheck that runs (not `NONE`). */
export const hasHealthcheck = (config: { Healthcheck?: { Test?: string[] } } | undefined): boolean => {
  const test = config?.Healthcheck?.Test;
  return Array.isArray(test) && test.length > 0 && test[0] !== 'NONE';
};
