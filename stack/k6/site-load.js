// Anonymous read load against Varnish (docker compose --profile load run --rm k6).
// Bounded: 10 virtual users for 30 s. Reports latency; fails on errors.
import http from 'k6/http';
import { check, sleep } from 'k6';

export const options = {
  vus: Number(__ENV.K6_VUS || 10),
  duration: __ENV.K6_DURATION || '30s',
  thresholds: { http_req_failed: ['rate<0.01'] },
};

const target = __ENV.K6_TARGET || 'http://varnish:8080';
const host = __ENV.K6_SITE_HOST || 'localhost:8080';
const paths = ['/', '/feed/', '/page/2/', '/category/news/', '/wp-sitemap.xml'];

export default function () {
  const path = paths[Math.floor(Math.random() * paths.length)];
  const res = http.get(target + path, { headers: { Host: host }, redirects: 0 });
  check(res, { 'status 200': (r) => r.status === 200 });
  sleep(0.1);
}
