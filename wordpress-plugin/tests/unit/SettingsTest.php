<?php
use VarnishEdge\Settings;

class SettingsTest extends \PHPUnit\Framework\TestCase {

	public function test_site_host_normalization() {
		$this->assertSame( 'example.com', Settings::site_host( 'https://Example.COM./' ) );
		$this->assertSame( 'example.com', Settings::site_host( 'http://example.com:80/x' ) );
		$this->assertSame( 'example.com', Settings::site_host( 'https://example.com:443' ) );
		$this->assertSame( 'localhost:8080', Settings::site_host( 'http://localhost:8080/blog/' ) );
	}

	public function test_secret_parsing() {
		$a = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi';
		$b = 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2';
		$this->assertSame( array( $a, $b ), Settings::parse_secrets( " $a , $b " ) );
		$this->assertSame( array( $a ), Settings::parse_secrets( "$a,garbage" ) );
		$this->assertSame( array(), Settings::parse_secrets( '' ) );
	}

	public function test_sanitize_keeps_old_values_on_bad_input_and_reports_errors() {
		$settings = new Settings();
		$old      = get_option( Settings::OPTION );
		$GLOBALS['wp_settings_errors'] = array();
		$out = $settings->sanitize(
			array(
				'purger_url' => 'ftp://nope',
				'secret'     => 'not-a-secret',
				'namespace'  => 'bad namespace!',
				'ttl'        => '5',
			)
		);
		$this->assertSame( $old['purger_url'], $out['purger_url'] );
		$this->assertSame( $old['secret'], $out['secret'] );
		$this->assertSame( $old['namespace'], $out['namespace'] );
		$this->assertSame( $old['ttl'], $out['ttl'] );
		$codes = wp_list_pluck( get_settings_errors( Settings::OPTION ), 'code' );
		$this->assertSame( array( 'varnish-edge-purger_url', 'varnish-edge-secret', 'varnish-edge-namespace', 'varnish-edge-ttl' ), $codes );

		$GLOBALS['wp_settings_errors'] = array();
		$out = $settings->sanitize(
			array(
				'purger_url' => 'http://purger.internal:9000/',
				'secret'     => '',
				'namespace'  => 'site-a',
				'ttl'        => '3600',
			)
		);
		$this->assertSame( 'http://purger.internal:9000', $out['purger_url'] );
		$this->assertSame( $old['secret'], $out['secret'], 'an empty secret field keeps the stored secret' );
		$this->assertSame( 'site-a', $out['namespace'] );
		$this->assertSame( 3600, $out['ttl'] );
		$this->assertSame( array(), get_settings_errors( Settings::OPTION ) );
	}

	/** Only http(s) purger URLs, with an error that says so; nothing else is ever used. */
	public function test_purger_url_scheme_is_http_or_https_with_a_clear_error() {
		$settings = new Settings();
		$old      = get_option( Settings::OPTION );
		foreach ( array( 'ftp://purger:8090', 'gopher://127.0.0.1:6379/_INFO', 'file:///etc/passwd', 'javascript:alert(1)', 'purger:8090' ) as $url ) {
			$GLOBALS['wp_settings_errors'] = array();
			$out                           = $settings->sanitize( array( 'purger_url' => $url ) );
			$this->assertSame( $old['purger_url'], $out['purger_url'], $url );
			$errors = get_settings_errors( Settings::OPTION );
			$this->assertCount( 1, $errors, $url );
			$this->assertStringContainsString( 'must start with http:// or https://', $errors[0]['message'], $url );
		}

		// A value that bypassed the form (a direct option write, a constant) is never used.
		$bad = static function () use ( $old ) {
			return array_merge( $old, array( 'purger_url' => 'gopher://127.0.0.1:6379' ) );
		};
		add_filter( 'pre_option_' . Settings::OPTION, $bad );
		try {
			$this->assertSame( '', $settings->purger_url() );
			$this->assertFalse( $settings->is_configured() );
		} finally {
			remove_filter( 'pre_option_' . Settings::OPTION, $bad );
		}
		$this->assertTrue( $settings->is_configured() );
	}
}
