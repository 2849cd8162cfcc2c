// Thresholds every load script shares, on its main scenario's requests only (setup traffic
// does not count). The `http_reqs` one also makes k6 keep that scenario's request count.
import { num } from './common.js';

export function scenarioThresholds(scenario, { maxErrorRate = num('MAX_ERROR_RATE', 0.01), p99Ms = num('MAX_P99_MS', 5000) } = {}) {
  return {
    [`http_reqs{scenario:${scenario}}`]: ['count>0'],
    [`http_req_failed{scenario:${scenario}}`]: [`rate<=${maxErrorRate}`],
    [`http_req_duration{scenario:${scenario}}`]: [`p(99)<${p99Ms}`],
  };
}
