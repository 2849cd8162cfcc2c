<?php
use VarnishEdge\Page_Cache_Headers;
use VarnishEdge\Plugin;
use VarnishEdge\Settings;

/**
 * WordPress's own Site Health "Page cache" test (`WP_Site_Health::get_test_page_cache()`, core
 * since 6.1), run for real: core's three loopback GETs of the home page, on whichever WordPress
 * the suite runs (WP_SOURCE). Straight to the origin, the plugin's `xkey` header counts only while
 * the plugin is configured; through a real Varnish with the shipped VCL, Varnish's own headers
 * count, for a trusted client (X-Varnish, Age) and for an outsider (Via), whatever the plugin's
 * settings.
 */
class PageCacheTest extends VE_TestCase {

	/** @var array<string,mixed> Settings before the test. */
	private $saved;

	/** @var array<int,array{proc:resource,pipes:array<int,resource>}> Varnish fronts started. */
	private $fronts = array();

	/** @var int|null Port the loopback is sent to instead of the site's (a Varnish front). */
	private $via_port;

	public static function setUpBeforeClass(): void {
		parent::setUpBeforeClass();
		require_once ABSPATH . 'wp-admin/includes/class-wp-site-health.php';
	}

	protected function setUp(): void {
		parent::setUp();
		$this->saved = get_option( Settings::OPTION );
		// Header detection is under test, not this machine's speed: core calls a response slower
		// than 600 ms "critical" whatever headers it has.
		add_filter( 'site_status_good_response_time_threshold', array( $this, 'slow_is_fine' ) );
		add_filter( 'pre_http_request', array( $this, 'through_front' ), 10, 3 );
	}

	protected function tearDown(): void {
		remove_filter( 'site_status_good_response_time_threshold', array( $this, 'slow_is_fine' ) );
		remove_filter( 'pre_http_request', array( $this, 'through_front' ), 10 );
		update_option( Settings::OPTION, $this->saved );
		foreach ( $this->fronts as $front ) {
			fclose( $front['pipes'][0] ); // varnish-front.mjs stops varnishd when its stdin closes.
			fclose( $front['pipes'][1] );
			proc_close( $front['proc'] );
		}
		$this->fronts   = array();
		$this->via_port = null;
		parent::tearDown();
	}

	public function slow_is_fine(): int {
		return 30000;
	}

	/**
	 * Filter `pre_http_request`: while a Varnish front is chosen, core's loopback to the home page
	 * goes to it instead, with the site's Host, as when the site's name resolves to the edge.
	 *
	 * @param false|array|WP_Error $preempt Response so far.
	 * @param array                $args    Request arguments.
	 * @param string               $url     URL.
	 */
	public function through_front( $preempt, $args, $url ) {
		if ( null === $this->via_port || home_url( '/' ) !== $url ) {
			return $preempt;
		}
		$args['headers'] = array_merge( (array) ( $args['headers'] ?? array() ), array( 'Host' => Environment::site() ) );
		return wp_remote_get( 'http://127.0.0.1:' . $this->via_port . '/', $args );
	}

	private function configure( bool $configured ): void {
		update_option( Settings::OPTION, array_merge( $this->saved, array( 'purger_url' => $configured ? Environment::purger_url() : '' ) ) );
		$this->assertSame( $configured, Plugin::instance()->settings->is_configured() );
	}

	/**
	 * Core's page-cache test and the headers it detected (its private detail, read as core reads it).
	 *
	 * @return array{0:array<string,mixed>,1:string[]}
	 */
	private function core_check(): array {
		$health = WP_Site_Health::get_instance();
		$result = $health->get_test_page_cache();
		$detail = new ReflectionMethod( WP_Site_Health::class, 'get_page_cache_detail' );
		$detail->setAccessible( true );
		$found = $detail->invoke( $health );
		$this->assertIsArray( $found, is_wp_error( $found ) ? $found->get_error_message() : 'page cache detail' );
		return array( $result, $found['headers'] );
	}

	/** A Varnish front (tests/support/varnish-front.mjs) for the loopback; `$purgers` as its ACL. */
	private function front( string $purgers = '' ): void {
		$proc = proc_open(
			array( 'node', dirname( __DIR__ ) . '/support/varnish-front.mjs' ),
			array( 0 => array( 'pipe', 'r' ), 1 => array( 'pipe', 'w' ), 2 => array( 'file', Environment::$dir . '/varnish-front.log', 'a' ) ),
			$pipes,
			null,
			array_merge(
				getenv(),
				array(
					'BACKEND' => Environment::site(),
					'PURGERS' => $purgers,
				)
			)
		);
		$this->assertIsResource( $proc );
		$this->fronts[] = array(
			'proc'  => $proc,
			'pipes' => $pipes,
		);
		$started = json_decode( (string) fgets( $pipes[1] ), true );
		$this->assertIsArray( $started );
		$this->assertArrayHasKey( 'port', $started, $started['error'] ?? (string) file_get_contents( Environment::$dir . '/varnish-front.log' ) );
		$this->via_port = (int) $started['port'];
	}

	public function test_core_page_cache_check_is_good_on_the_origin_when_the_plugin_is_configured(): void {
		$this->configure( true );
		list( $result, $headers ) = $this->core_check();
		$this->assertSame( 'good', $result['status'], $result['label'] . ' ' . wp_strip_all_tags( $result['description'] ) );
		$this->assertSame( 'Page cache is detected and the server response time is good', $result['label'] );
		$this->assertContains( 'xkey', $headers, 'the plugin\'s surrogate keys on the origin\'s response' );
		$this->assertStringContainsString( '<code>xkey</code>', $result['description'], 'core lists the header it detected' );
	}

	public function test_core_page_cache_check_does_not_count_an_unconfigured_plugin(): void {
		$this->configure( false );
		// The origin still tags the page (the microcache's keys), without the long TTL...
		$home = Environment::fetch( '/' );
		$this->assertSame( 200, $home['status'] );
		$this->assertNotEmpty( Environment::keys_of( $home ) );
		$this->assertArrayNotHasKey( 'surrogate-control', $home['headers'] );
		// ...and that claims no cache.
		list( $result, $headers ) = $this->core_check();
		$this->assertNotContains( 'xkey', $headers );
		$this->assertSame( array(), $headers, 'the origin alone sends no cache header' );
		$this->assertSame( 'recommended', $result['status'], $result['label'] );
		$this->assertSame( 'Page cache is not detected but the server response time is OK', $result['label'] );
	}

	public function test_only_keys_of_this_sites_namespace_count(): void {
		$this->configure( true );
		$check = new Page_Cache_Headers( Plugin::instance()->settings );
		$this->assertTrue( $check->is_own_key_header( $this->key( 'home' ) . ' ' . $this->key( 'p-1' ) ) );
		$this->assertFalse( $check->is_own_key_header( 'othersite-home othersite-p-1' ), 'another site\'s keys' );
		$this->assertFalse( $check->is_own_key_header( '' ) );

		// Core's own checks are kept beside these: never narrowed, presence-only entries untouched.
		$core    = static fn( $value ) => 'core' === $value;
		$headers = $check->add_headers(
			array(
				'x-varnish' => $core,
				'via'       => null,
				'etag'      => '',
			)
		);
		$this->assertNull( $headers['via'] );
		$this->assertSame( '', $headers['etag'] );
		$this->assertTrue( $headers['x-varnish']( 'core' ) );
		$this->assertTrue( $headers['x-varnish']( '32770' ) );
		$this->assertFalse( $headers['x-varnish']( 'nope' ) );
		$this->assertTrue( $headers['age']( '0' ) );
		$this->assertFalse( $headers['age']( '-1' ) );
		$this->assertFalse( Page_Cache_Headers::is_varnish_via( '1.1 squid' ) );
		$this->assertTrue( Page_Cache_Headers::is_varnish_via( '1.1 edge-a (Vinyl-Cache/9.0)' ) );
	}

	/**
	 * Through the edge, as a client the VCL trusts (its `purgers` ACL): X-Varnish on every
	 * response, Age once the copy is a second old (core skips an `Age: 0`, its value being
	 * empty() in PHP); Varnish strips the keys.
	 */
	public function test_core_page_cache_check_is_good_through_varnish_for_a_trusted_client(): void {
		$this->configure( true );
		$this->front();
		$first = wp_remote_get( home_url( '/' ) ); // Through the front: stored for the TTL the plugin gives.
		$this->assertSame( 200, wp_remote_retrieve_response_code( $first ) );
		$this->assertMatchesRegularExpression( '/^\d+$/', (string) wp_remote_retrieve_header( $first, 'x-varnish' ), 'a miss: one id' );
		sleep( 2 );
		list( $result, $headers ) = $this->core_check();
		$this->assertSame( 'good', $result['status'], $result['label'] . ' ' . wp_strip_all_tags( $result['description'] ) );
		$this->assertContains( 'x-varnish', $headers );
		$this->assertContains( 'age', $headers );
		$this->assertContains( 'via', $headers );
		$this->assertNotContains( 'xkey', $headers, 'Varnish strips the keys' );
	}

	/** Through the edge, as an outsider: the VCL hides X-Varnish and Age, Varnish's Via stays. */
	public function test_core_page_cache_check_is_good_through_varnish_for_an_outsider(): void {
		$this->configure( false );
		$this->front( '192.0.2.1' );
		list( $result, $headers ) = $this->core_check();
		$this->assertSame( 'good', $result['status'], $result['label'] . ' ' . wp_strip_all_tags( $result['description'] ) );
		$this->assertSame( array( 'via' ), array_values( $headers ) );
	}
}
