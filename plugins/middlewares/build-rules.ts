/**
 * Values the Traefik JSON Schema allows but Traefik's middleware constructors refuse (API.md §2
 * numbers paragraph). Traefik 3.7.15 then marks the middleware disabled and disables every router
 * using it (the resource answers 404), so they are refused with 422 at the field. Each rule was
 * measured against the binary; its error text is quoted. Values Traefik builds stay accepted.
 */
import type { ErrorDetail } from '../../core/errors/app-error.ts';
import { goDurationNs } from '../../core/formats.ts';
import { goIpOrCidr } from '../../model/go-ip.ts';
import { goRegexpError } from '../../model/go-regexp.ts';
import { circuitBreakerError } from './circuit-breaker.ts';
import { retryExpressionError } from './retry-expression.ts';
import { pointerToken } from '../../core/json-pointer.ts';

type Node = Record<string, unknown>;
const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): Array<[number, string]> =>
  Array.isArray(v) ? v.flatMap((s, i): Array<[number, string]> => (typeof s === 'string' ? [[i, s]] : [])) : [];

/** Codes Go's http.StatusText names (ipAllowList rejectStatusCode; Node's list also has 509). */
const GO_STATUS = new Set([
  100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400,
  401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425,
  426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);
const ENCODINGS = ['gzip', 'br', 'zstd'];
/** Go's strconv.Atoi. */
const ATOI = /^[+-]?[0-9]{1,18}$/;

/** Problems of `config` for middleware `type` that Traefik reports when it builds the middleware. */
export function buildProblems(type: string, config: Node): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const add = (path: string, message: string) => out.push({ path: `/config${path}`, message });
  const regex = (path: string, value: unknown) => {
    if (typeof value !== 'string') return;
    const error = goRegexpError(value);
    if (error)
      add(path, `is not a regular expression Traefik can compile (Go RE2 syntax): error parsing regexp: ${error}`);
  };
  const ipList = (path: string, value: unknown) => {
    for (const [i, entry] of strings(value))
      if (!goIpOrCidr(entry))
        add(
          `${path}/${i}`,
          `must be an IP address or a CIDR range such as 10.0.0.0/8 (Traefik: "invalid CIDR address: ${entry.slice(0, 60)}")`,
        );
  };
  const ipStrategy = (path: string, value: unknown) => {
    if (!isObject(value)) return;
    const depth = typeof value.depth === 'number' ? value.depth : 0;
    const excluded = Array.isArray(value.excludedIPs) && value.excludedIPs.length > 0;
    // Traefik picks one strategy: depth > 0, else excludedIPs, else the remote address; only the
    // picked one is built (excludedIPs is ignored with a depth, ipv6Subnet with excludedIPs)
    if (depth <= 0 && excluded) ipList(`${path}/excludedIPs`, value.excludedIPs);
    const subnet = value.ipv6Subnet;
    if ((depth > 0 || !excluded) && typeof subnet === 'number' && (subnet <= 0 || subnet > 128))
      add(
        `${path}/ipv6Subnet`,
        `must be 1 to 128 (Traefik: "invalid IPv6 subnet ${subnet} value, should be greater to 0 and lower or equal to 128")`,
      );
  };
  const sourceCriterion = (path: string, value: unknown) => {
    if (!isObject(value)) return;
    const set = [
      ['ipStrategy', value.ipStrategy !== undefined && value.ipStrategy !== null],
      ['requestHeaderName', typeof value.requestHeaderName === 'string' && value.requestHeaderName !== ''],
      ['requestHost', value.requestHost === true],
    ].filter(([, on]) => on);
    if (set.length > 1)
      add(
        path,
        `must set only one of ipStrategy, requestHeaderName and requestHost (Traefik: "${set.map(([k]) => k).join(' and ')} are mutually exclusive")`,
      );
    ipStrategy(`${path}/ipStrategy`, value.ipStrategy);
  };
  const nonEmpty = (key: string, traefik: string) => {
    if (config[key] === undefined || config[key] === '') add(`/${key}`, `must not be empty (Traefik: "${traefik}")`);
  };
  const notNegative = (key: string, traefik: string) => {
    const v = config[key];
    if (typeof v === 'number' && v < 0)
      add(`/${key}`, `must be 0 or more (Traefik: "${traefik} should be >= 0 got ${v}")`);
  };
  const statusRange = (path: string, block: string) => {
    const parts = block.trim().split('-');
    if (!parts.slice(0, 2).every((part) => ATOI.test(part)))
      add(
        path,
        `must be a status code or a range such as 500-599 (Traefik: strconv.Atoi cannot parse "${block.slice(0, 40)}")`,
      );
  };

  switch (type) {
    case 'ipAllowList':
    case 'ipWhiteList':
      if (!Array.isArray(config.sourceRange) || config.sourceRange.length === 0)
        add(
          '/sourceRange',
          `must list at least one IP address or CIDR range (Traefik: "sourceRange is empty, ${type === 'ipAllowList' ? 'IPAllowLister' : 'IPWhiteLister'} not created")`,
        );
      ipList('/sourceRange', config.sourceRange);
      ipStrategy('/ipStrategy', config.ipStrategy);
      if (
        typeof config.rejectStatusCode === 'number' &&
        config.rejectStatusCode !== 0 &&
        !GO_STATUS.has(config.rejectStatusCode)
      )
        add(
          '/rejectStatusCode',
          `must be an HTTP status code Go knows, such as 403 or 404 (Traefik: "invalid HTTP status code ${config.rejectStatusCode}")`,
        );
      break;
    case 'rateLimit': {
      sourceCriterion('/sourceCriterion', config.sourceCriterion);
      const period = config.period;
      const negative =
        (typeof period === 'number' && period < 0) ||
        (typeof period === 'string' &&
          period.startsWith('-') &&
          (/^-[0-9]+$/.test(period) ? Number(period) !== 0 : goDurationNs(period.slice(1)) !== 0n));
      if (negative) add('/period', `must not be negative (Traefik: "negative value not valid for period")`);
      break;
    }
    case 'inFlightReq':
      sourceCriterion('/sourceCriterion', config.sourceCriterion);
      break;
    case 'errors':
      for (const [i, block] of strings(config.status)) statusRange(`/status/${i}`, block);
      if (isObject(config.statusRewrites))
        for (const key of Object.keys(config.statusRewrites)) statusRange(`/statusRewrites/${pointerToken(key)}`, key);
      break;
    case 'redirectRegex':
    case 'replacePathRegex':
      regex('/regex', config.regex);
      break;
    case 'stripPrefixRegex':
      for (const [i, value] of strings(config.regex)) regex(`/regex/${i}`, value);
      break;
    case 'headers':
      for (const [i, value] of strings(config.accessControlAllowOriginListRegex))
        regex(`/accessControlAllowOriginListRegex/${i}`, value);
      break;
    case 'forwardAuth':
      regex('/authResponseHeadersRegex', config.authResponseHeadersRegex);
      break;
    case 'compress': {
      const encodings = strings(config.encodings);
      for (const [i, encoding] of encodings)
        if (!ENCODINGS.includes(encoding))
          add(
            `/encodings/${i}`,
            `must be one of ${ENCODINGS.join(', ')} (Traefik: "unsupported encoding: ${encoding}")`,
          );
      const allowed = encodings.length > 0 ? encodings.map(([, e]) => e) : ENCODINGS;
      if (
        typeof config.defaultEncoding === 'string' &&
        config.defaultEncoding !== '' &&
        !allowed.includes(config.defaultEncoding)
      )
        add(
          '/defaultEncoding',
          `must be one of the encodings (${allowed.join(', ')}) (Traefik: "unsupported default encoding: ${config.defaultEncoding}")`,
        );
      break;
    }
    case 'buffering':
      notNegative('maxRequestBodyBytes', 'max bytes');
      notNegative('memRequestBodyBytes', 'mem bytes');
      notNegative('maxResponseBodyBytes', 'max bytes');
      notNegative('memResponseBodyBytes', 'mem bytes');
      if (typeof config.retryExpression === 'string') {
        const error = retryExpressionError(config.retryExpression);
        if (error) add('/retryExpression', `is not a retry expression Traefik can build (Traefik: "${error}")`);
      }
      break;
    case 'circuitBreaker': {
      const error = typeof config.expression === 'string' ? circuitBreakerError(config.expression) : null;
      if (error) add('/expression', `is not an expression Traefik can build: ${error}`);
      break;
    }
    case 'retry':
      if (typeof config.attempts === 'number' && config.attempts <= 0)
        add('/attempts', `must be at least 1 (Traefik: "incorrect (or empty) value for attempt (${config.attempts})")`);
      break;
    case 'addPrefix':
      nonEmpty('prefix', 'prefix cannot be empty');
      break;
    case 'redirectScheme':
      nonEmpty('scheme', 'you must provide a target scheme');
      break;
    case 'basicAuth':
    case 'digestAuth': {
      const parts = type === 'basicAuth' ? 2 : 3;
      const form = type === 'basicAuth' ? 'name:hashed-password' : 'name:realm:encoded-password';
      const label = type === 'basicAuth' ? 'BasicUser' : 'DigestUser';
      for (const [i, user] of strings(config.users))
        if (user.split(':').length !== parts)
          add(`/users/${i}`, `must have the form ${form} (Traefik: "error parsing ${label}")`);
      break;
    }
  }
  return out;
}
