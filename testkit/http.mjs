// The tests' HTTP client is the audit's (stack/audit/http.mjs): one client for the repository,
// reached by tests through here so production code never imports test code.
export { request } from '../stack/audit/http.mjs';
