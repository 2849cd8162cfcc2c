<?php
use VarnishEdge\Admin_Bar;
use VarnishEdge\Outbox_Delivery;
use VarnishEdge\Outbox_Table;
use VarnishEdge\Plugin;
use VarnishEdge\Site_Health;

class VE_Redirect extends Exception {
}
class VE_Die extends Exception {
}

/**
 * Settings page, admin-post handlers (capabilities and nonces), admin bar, Site Health, and the
 * wp-config constant overrides.
 */
class AdminTest extends VE_TestCase {

	private $admin;

	protected function setUp(): void {
		parent::setUp();
		$plugin      = Plugin::instance();
		$this->admin = new \VarnishEdge\Admin_Page( $plugin->settings, $plugin->outbox, $plugin->delivery, $plugin->queue, $plugin->manual, $plugin->live_log, $plugin->live );
		add_filter( 'wp_redirect', array( $this, 'stop_redirect' ), 1, 1 );
		add_filter( 'wp_die_handler', array( $this, 'die_handler' ) );
		$_GET = $_POST = $_REQUEST = array();
	}

	protected function tearDown(): void {
		remove_filter( 'wp_redirect', array( $this, 'stop_redirect' ), 1 );
		remove_filter( 'wp_die_handler', array( $this, 'die_handler' ) );
		$_GET = $_POST = $_REQUEST = array();
		parent::tearDown();
	}

	public function stop_redirect( $location ) {
		throw new VE_Redirect( $location );
	}

	public function die_handler() {
		return static function ( $message ) {
			throw new VE_Die( is_string( $message ) ? $message : 'died' );
		};
	}

	private function notice() {
		return get_transient( 'varnish_edge_notice_' . get_current_user_id() );
	}

	private function call( callable $handler ) {
		try {
			$handler();
		} catch ( VE_Redirect $r ) {
			return $r->getMessage();
		}
		$this->fail( 'the handler should redirect' );
	}

	public function test_test_connection_reports_exactly_what_failed() {
		$ok = $this->admin->test_connection();
		$this->assertTrue( $ok['ok'], $ok['message'] );
		$this->assertStringContainsString( 'Connection OK', $ok['message'] );
		$this->assertTrue( Environment::webhooks()[0]['signature_ok'] );

		Environment::stop_receiver();
		$down = $this->admin->test_connection();
		$this->assertFalse( $down['ok'] );
		$this->assertStringContainsString( 'Could not reach the purger at ' . Environment::purger_url() . '/v1/events', $down['message'] );
		$this->assertMatchesRegularExpression( '/refused|connect/i', $down['message'] );
		Environment::start_receiver();

		$saved = get_option( 'varnish_edge_settings' );
		update_option( 'varnish_edge_settings', array_merge( $saved, array( 'secret' => 'whsec_' . base64_encode( str_repeat( 'w', 24 ) ) ) ) );
		$wrong = $this->admin->test_connection();
		update_option( 'varnish_edge_settings', $saved );
		$this->assertFalse( $wrong['ok'] );
		$this->assertStringContainsString( 'HTTP 401', $wrong['message'] );
		$this->assertStringContainsString( 'signature', $wrong['message'] );
		$this->assertStringNotContainsString( 'whsec_', $wrong['message'], 'secrets are never printed' );
	}

	/**
	 * The purger URL may point at any internal host, so what it answers is never
	 * echoed: the status code and a generic, actionable message only.
	 */
	public function test_test_connection_never_echoes_the_response_body() {
		Environment::receiver_status( 400 ); // Body: {"error":"storage","message":"forced by test"}.
		$refused = $this->admin->test_connection();
		$this->assertFalse( $refused['ok'] );
		$this->assertStringContainsString( 'HTTP 400', $refused['message'] );
		$this->assertStringNotContainsString( 'forced by test', $refused['message'] );
		$this->assertStringNotContainsString( 'storage', $refused['message'] );
		Environment::receiver_status( 0 );

		// Pointed at another internal service (here the WordPress site itself): its 404 page stays private.
		$saved = get_option( 'varnish_edge_settings' );
		update_option( 'varnish_edge_settings', array_merge( $saved, array( 'purger_url' => Environment::home() ) ) );
		try {
			$other = $this->admin->test_connection();
		} finally {
			update_option( 'varnish_edge_settings', $saved );
		}
		$this->assertFalse( $other['ok'] );
		$this->assertStringContainsString( 'HTTP 404', $other['message'] );
		$this->assertStringContainsString( 'Check the purger URL', $other['message'] );
		$this->assertStringNotContainsString( 'Edge Test', $other['message'], 'the site title from the page body' );
		$this->assertLessThan( 300, strlen( $other['message'] ) );
	}

	public function test_purge_handler_requires_capability_and_nonce() {
		$editor = wp_insert_user( array( 'user_login' => 'ed' . wp_generate_password( 4, false ), 'user_pass' => 'x', 'role' => 'editor' ) );
		wp_set_current_user( $editor );
		$_GET = $_REQUEST = array( 'scope' => 'all', '_wpnonce' => wp_create_nonce( 'varnish_edge_purge_all' ) );
		try {
			$this->admin->handle_purge();
			$this->fail( 'an editor must not purge the site' );
		} catch ( VE_Die $e ) {
			$this->assertStringContainsString( 'not allowed', $e->getMessage() );
		}

		wp_set_current_user( 1 );
		$_GET = $_REQUEST = array( 'scope' => 'all', '_wpnonce' => 'forged' );
		try {
			$this->admin->handle_purge();
			$this->fail( 'a forged nonce must be rejected' );
		} catch ( VE_Die $e ) {
			$this->assertNotSame( '', $e->getMessage() );
		}
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks() );

		$_GET = $_REQUEST = array( 'scope' => 'all', '_wpnonce' => wp_create_nonce( 'varnish_edge_purge_all' ) );
		$this->call( array( $this->admin, 'handle_purge' ) );
		// Sent at once; the suite's receiver answers no receipts (LiveStatusTest has a real purger).
		$this->assertSame( 'warning', $this->notice()[0] );
		$this->assertStringStartsWith( 'Purge of the whole site sent. Could not read the edge status: ', $this->notice()[1] );
		$this->assertTrue( $this->sent_all() );

		Environment::clear_webhooks();
		$_GET = $_REQUEST = array( 'scope' => 'url', 'url' => home_url( '/2026/02/bravo/' ), '_wpnonce' => wp_create_nonce( 'varnish_edge_purge_url' ) );
		$this->call( array( $this->admin, 'handle_purge' ) );
		$this->end_request();
		$this->assertSame( array( home_url( '/2026/02/bravo/' ) ), $this->sent_urls() );

		Environment::clear_webhooks();
		$_GET = $_REQUEST = array( 'scope' => 'url', 'url' => 'http://elsewhere.test/', '_wpnonce' => wp_create_nonce( 'varnish_edge_purge_url' ) );
		$this->call( array( $this->admin, 'handle_purge' ) );
		$this->assertSame( 'error', $this->notice()[0] );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks() );
	}

	public function test_flush_outbox_handler() {
		Environment::stop_receiver();
		wp_update_post( array( 'ID' => self::$ids['bravo'], 'post_content' => 'b ' . microtime( true ) ) );
		$this->end_request();
		Environment::start_receiver();
		$this->assertSame( 1, Plugin::instance()->outbox->stats()['rows'] );
		$_POST = $_REQUEST = array( '_wpnonce' => wp_create_nonce( 'varnish_edge_flush_outbox' ) );
		$this->call( array( $this->admin, 'handle_flush_outbox' ) );
		$this->assertSame( 'success', $this->notice()[0] );
		$this->assertSame( 0, Plugin::instance()->outbox->stats()['rows'] );
		$this->assertCount( 1, Environment::webhooks() );
	}

	public function test_settings_page_escapes_and_never_prints_the_secret() {
		update_option( Outbox_Delivery::STATUS_OPTION, array( 'last_error' => '<script>alert(1)</script>', 'last_error_at' => time() ) );
		ob_start();
		$this->admin->register_settings();
		$this->admin->render();
		$html = ob_get_clean();
		$this->assertStringContainsString( 'Test connection', $html );
		$this->assertStringContainsString( 'id="varnish-edge-status"', $html );
		$this->assertStringContainsString( '&lt;script&gt;alert(1)&lt;/script&gt;', $html );
		$this->assertStringNotContainsString( '<script>alert(1)', $html );
		$this->assertStringNotContainsString( Environment::SECRET, $html );
		$this->assertStringContainsString( 'name="_wpnonce"', $html );
		delete_option( Outbox_Delivery::STATUS_OPTION );

		$subscriber = wp_insert_user( array( 'user_login' => 'sub' . wp_generate_password( 4, false ), 'user_pass' => 'x', 'role' => 'subscriber' ) );
		wp_set_current_user( $subscriber );
		$this->expectException( VE_Die::class );
		$this->admin->render();
	}

	public function test_admin_bar_links_only_for_allowed_users() {
		require_once ABSPATH . WPINC . '/class-wp-admin-bar.php';
		$bar = new WP_Admin_Bar();
		( new Admin_Bar() )->add_nodes( $bar );
		$node = $bar->get_node( 'varnish-edge-purge-all' );
		$this->assertNotNull( $node );
		$this->assertStringContainsString( 'action=varnish_edge_purge', $node->href );
		$this->assertStringContainsString( '_wpnonce=', $node->href );
		$this->assertNotNull( $bar->get_node( 'varnish-edge-purge-page' ) );

		wp_set_current_user( self::$ids['alice'] );
		$bar = new WP_Admin_Bar();
		( new Admin_Bar() )->add_nodes( $bar );
		$this->assertNull( $bar->get_node( 'varnish-edge-purge-all' ) );
	}

	public function test_site_health_reports_backlog_and_errors() {
		$health = new Site_Health( Plugin::instance()->settings, Plugin::instance()->outbox );
		$tests  = $health->add_test( array( 'direct' => array() ) );
		$this->assertArrayHasKey( 'varnish_edge', $tests['direct'] );
		$this->assertSame( 'good', $health->run()['status'] );

		Environment::stop_receiver();
		wp_update_post( array( 'ID' => self::$ids['bravo'], 'post_content' => 'b ' . microtime( true ) ) );
		$this->end_request();
		$result = $health->run();
		$this->assertSame( 'recommended', $result['status'] );
		$this->assertStringContainsString( '1 pending batches', $result['description'] );
		$this->assertStringContainsString( 'Could not reach the purger', $result['description'] );

		global $wpdb;
		$wpdb->query( 'UPDATE ' . Outbox_Table::name() . ' SET created_at = created_at - 3600' );
		$this->assertSame( 'critical', $health->run()['status'] );
	}

	public function test_wp_config_constants_override_and_are_read_only() {
		$constants = Environment::$wp . '/constants.php';
		file_put_contents(
			$constants,
			"<?php\ndefine( 'VARNISH_EDGE_PURGER_URL', 'http://purger.example:7000' );\ndefine( 'VARNISH_EDGE_SECRET', 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi,whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2' );\ndefine( 'VARNISH_EDGE_NAMESPACE', 'constns' );\ndefine( 'VARNISH_EDGE_TTL', 1234 );\n"
		);
		$script = Environment::$dir . '/constants-probe.php';
		file_put_contents(
			$script,
			'<?php $_SERVER["HTTP_HOST"] = "127.0.0.1"; require ' . var_export( Environment::$wp . '/wp-load.php', true ) . '; require_once ABSPATH . "wp-admin/includes/admin.php"; wp_set_current_user( 1 );'
			. '$p = \VarnishEdge\Plugin::instance(); $a = new \VarnishEdge\Admin_Page( $p->settings, $p->outbox, $p->delivery, $p->queue, $p->manual, $p->live_log, $p->live );'
			. 'ob_start(); $a->render_field( array( "name" => "ttl" ) ); $a->render_field( array( "name" => "secret" ) ); $html = ob_get_clean();'
			. 'echo json_encode( array( "url" => $p->settings->events_endpoint(), "secrets" => count( $p->settings->secrets() ), "ns" => $p->settings->key_namespace(), "ttl" => $p->settings->ttl(), "html" => $html ) );'
		);
		try {
			$out = shell_exec( escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( $script ) );
		} finally {
			unlink( $constants );
		}
		$data = json_decode( (string) $out, true );
		$this->assertIsArray( $data, (string) $out );
		$this->assertSame( 'http://purger.example:7000/v1/events', $data['url'] );
		$this->assertSame( 2, $data['secrets'] );
		$this->assertSame( 'constns', $data['ns'] );
		$this->assertSame( 1234, $data['ttl'] );
		$this->assertStringContainsString( 'readonly', $data['html'] );
		$this->assertStringContainsString( 'VARNISH_EDGE_TTL', $data['html'] );
		$this->assertStringNotContainsString( 'whsec_', $data['html'] );
	}
}
