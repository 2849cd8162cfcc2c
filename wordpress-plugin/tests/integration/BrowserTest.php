<?php
/**
 * Headless Chromium logs into wp-admin, saves the settings page, tests the connection and clicks
 * "Purge whole site" in the admin bar; the signed webhook arrives at the receiver.
 */
class BrowserTest extends VE_TestCase {

	public function test_admin_saves_settings_and_purges_from_the_admin_bar() {
		$dir = dirname( __DIR__ ) . '/browser';
		$this->assertDirectoryExists( $dir . '/node_modules/playwright-core', 'run `npm ci` in tests/browser (scripts/suites/plugin.sh does)' );
		$saved = get_option( 'varnish_edge_settings' );

		$cmd = sprintf(
			'cd %s && WP_URL=%s WP_USER=admin WP_PASS=admin-password NEW_TTL=90000 timeout 240 node admin.mjs 2>&1',
			escapeshellarg( $dir ),
			escapeshellarg( Environment::home() )
		);
		exec( $cmd, $out, $rc );
		$json   = json_decode( (string) end( $out ), true );
		$this->assertSame( 0, $rc, implode( "\n", $out ) );
		$this->assertIsArray( $json, implode( "\n", $out ) );
		$this->assertSame( array( 'logged in', 'settings saved', 'connection tested', 'purged whole site' ), $json['steps'] );
		$this->assertSame( '90000', $json['ttl_after_save'] );
		$this->assertStringContainsString( 'Connection OK', $json['test_notice'] );

		wp_cache_delete( 'varnish_edge_settings', 'options' );
		wp_cache_delete( 'alloptions', 'options' );
		$now = get_option( 'varnish_edge_settings' );
		$this->assertSame( 90000, $now['ttl'] );
		$this->assertSame( $saved['secret'], $now['secret'], 'saving with an empty secret field keeps the secret' );
		$this->assertSame( $saved['purger_url'], $now['purger_url'] );

		$all = array_values( array_filter( Environment::webhooks(), static function ( $hook ) {
			return 202 === $hook['status'] && 'all' === ( $hook['body']['events'][0]['kind'] ?? '' );
		} ) );
		$this->assertCount( 1, $all, 'the admin bar purge arrived once' );
		$this->assertTrue( $all[0]['signature_ok'] );
		$this->assertStringContainsString( 'admin', $all[0]['body']['events'][0]['reason'] );
		update_option( 'varnish_edge_settings', $saved );
	}
}
