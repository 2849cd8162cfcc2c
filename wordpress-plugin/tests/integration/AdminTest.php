<?php
use VarnishEdge\Admin_Bar;
use VarnishEdge\Live_Status_Log;
use VarnishEdge\Outbox_Delivery;
use VarnishEdge\Outbox_Table;
use VarnishEdge\Plugin;
use VarnishEdge\Settings;
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

	/** @var callable|null The fake purger's receipts (`pre_http_request`), while a test uses one. */
	private $purger_answer;

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
		if ( $this->purger_answer ) {
			remove_filter( 'pre_http_request', $this->purger_answer, 10 );
			$this->purger_answer = null;
		}
		// The settings page registers the option's sanitize callback: later writes are raw again.
		if ( isset( get_registered_settings()[ Settings::OPTION ] ) ) {
			unregister_setting( 'varnish_edge', Settings::OPTION );
		}
		$_GET = $_POST = $_REQUEST = $_COOKIE = array();
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

	private function health(): Site_Health {
		$plugin = Plugin::instance();
		return new Site_Health( $plugin->settings, $plugin->outbox, $plugin->live_log, $plugin->live );
	}

	public function test_site_health_reports_backlog_and_errors() {
		$health = $this->health();
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

	/**
	 * A fresh PHP process of the site with these wp-config constants (read from constants.php next
	 * to wp-config.php): the settings fields rendered, the effective settings and the connection
	 * test's message.
	 *
	 * @return array<string,mixed>
	 */
	private function with_constants( string $defines ): array {
		$constants = Environment::$wp . '/constants.php';
		file_put_contents( $constants, "<?php\n" . $defines );
		$script = Environment::$dir . '/constants-probe.php';
		file_put_contents(
			$script,
			'<?php $_SERVER["HTTP_HOST"] = "127.0.0.1"; require ' . var_export( Environment::$wp . '/wp-load.php', true ) . '; require_once ABSPATH . "wp-admin/includes/admin.php"; wp_set_current_user( 1 );'
			. '$p = \VarnishEdge\Plugin::instance(); $a = new \VarnishEdge\Admin_Page( $p->settings, $p->outbox, $p->delivery, $p->queue, $p->manual, $p->live_log, $p->live );'
			. '$html = array(); foreach ( array( "purger_url", "secret", "namespace", "ttl" ) as $n ) { ob_start(); $a->render_field( array( "name" => $n ) ); $html[ $n ] = ob_get_clean(); }'
			. 'echo json_encode( array( "url" => $p->settings->events_endpoint(), "secrets" => count( $p->settings->secrets() ), "ns" => $p->settings->key_namespace(), "ttl" => $p->settings->ttl(), "html" => $html, "test" => $a->test_connection() ) );'
		);
		try {
			$out = shell_exec( escapeshellarg( PHP_BINARY ) . ' ' . escapeshellarg( $script ) );
		} finally {
			unlink( $constants );
		}
		$data = json_decode( (string) $out, true );
		$this->assertIsArray( $data, (string) $out );
		return $data;
	}

	public function test_wp_config_constants_override_and_are_read_only() {
		$data = $this->with_constants(
			"define( 'VARNISH_EDGE_PURGER_URL', 'http://purger.example:7000' );\ndefine( 'VARNISH_EDGE_SECRET', 'whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUEtMDEyMzQ1Njc4OWFi,whsec_cHVyZ2VyLXRlc3Qtc2VjcmV0LUItcm90YXRlZC05ODc2' );\ndefine( 'VARNISH_EDGE_NAMESPACE', 'constns' );\ndefine( 'VARNISH_EDGE_TTL', 1234 );\n"
		);
		$this->assertSame( 'http://purger.example:7000/v1/events', $data['url'] );
		$this->assertSame( 2, $data['secrets'] );
		$this->assertSame( 'constns', $data['ns'] );
		$this->assertSame( 1234, $data['ttl'] );
		$html = implode( "\n", $data['html'] );
		$this->assertStringContainsString( 'readonly', $data['html']['ttl'] );
		$this->assertStringContainsString( 'VARNISH_EDGE_TTL', $data['html']['ttl'] );
		$this->assertStringNotContainsString( 'whsec_', $html );
		foreach ( array( 'purger_url' => 'VARNISH_EDGE_PURGER_URL', 'secret' => 'VARNISH_EDGE_SECRET' ) as $field => $constant ) {
			$this->assertStringContainsString( "Defined by the $constant constant in wp-config.php, which overrides this field.", $data['html'][ $field ] );
			$this->assertStringContainsString( 'The value saved on this page is not used while the constant is defined.', $data['html'][ $field ], 'the site\'s own option holds another value' );
		}
		$this->assertStringContainsString( 'value="http://purger.example:7000" readonly disabled', $data['html']['purger_url'] );
		$this->assertStringContainsString( '2 secrets are set in wp-config.php (not shown).', $data['html']['secret'] );
		$this->assertStringNotContainsString( 'varnish-edge-constant-problem', $html );
		// The test names the constant, not the field, as what to fix (this host is unreachable here).
		$this->assertFalse( $data['test']['ok'] );
		$this->assertStringContainsString( 'Could not reach the purger at http://purger.example:7000/v1/events', $data['test']['message'] );
		$this->assertStringEndsWith( 'Check the VARNISH_EDGE_PURGER_URL constant in wp-config.php (scheme, host and port), and that the purger is running and reachable from this server.', $data['test']['message'] );
	}

	/** A constant with a bad value bypasses the form's checks: ignored, and the page says so. */
	public function test_wp_config_constants_with_bad_values_are_named() {
		$data = $this->with_constants( "define( 'VARNISH_EDGE_PURGER_URL', 'ftp://purger:8090' );\ndefine( 'VARNISH_EDGE_SECRET', 'not-a-secret' );\n" );
		$this->assertSame( 0, $data['secrets'] );
		$this->assertStringContainsString( 'The VARNISH_EDGE_PURGER_URL constant is not an http:// or https:// URL with a host (and no query string or fragment): nothing is sent to the purger until it is fixed.', $data['html']['purger_url'] );
		$this->assertStringContainsString( 'The VARNISH_EDGE_SECRET constant holds no valid whsec_ secret', $data['html']['secret'] );
		$this->assertSame( 'Test failed: the VARNISH_EDGE_PURGER_URL constant in wp-config.php is not a valid http:// or https:// URL.', $data['test']['message'] );
	}

	/* ---------------------------------------------- a user who never edits wp-config.php */

	/**
	 * An administrator's browser session: its cookies, and this process made the same session
	 * (so nonces created here are that browser's).
	 *
	 * @return array<string,string> Cookie name => value.
	 */
	private function admin_session(): array {
		$expiration                  = time() + HOUR_IN_SECONDS;
		$token                       = WP_Session_Tokens::get_instance( 1 )->create( $expiration );
		$logged_in                   = wp_generate_auth_cookie( 1, $expiration, 'logged_in', $token );
		$_COOKIE[ LOGGED_IN_COOKIE ] = $logged_in;
		return array(
			AUTH_COOKIE      => wp_generate_auth_cookie( 1, $expiration, 'auth', $token ),
			LOGGED_IN_COOKIE => $logged_in,
		);
	}

	/**
	 * POST a wp-admin form to the running site as that browser; the redirect it answers with.
	 *
	 * @param array<string,string> $cookies Session cookies.
	 * @param array<string,mixed>  $fields  Form fields.
	 */
	private function post_form( string $path, array $fields, array $cookies ): string {
		$ch       = curl_init( Environment::home() . $path );
		$location = '';
		curl_setopt_array(
			$ch,
			array(
				CURLOPT_POST           => true,
				CURLOPT_POSTFIELDS     => http_build_query( $fields ),
				CURLOPT_RETURNTRANSFER => true,
				CURLOPT_TIMEOUT        => 60,
				CURLOPT_COOKIE         => implode( '; ', array_map( static fn( $k, $v ) => $k . '=' . rawurlencode( $v ), array_keys( $cookies ), $cookies ) ),
				CURLOPT_HEADERFUNCTION => static function ( $ch, $line ) use ( &$location ) {
					if ( 0 === stripos( $line, 'location:' ) ) {
						$location = trim( substr( $line, 9 ) );
					}
					return strlen( $line );
				},
			)
		);
		curl_exec( $ch );
		$status = (int) curl_getinfo( $ch, CURLINFO_RESPONSE_CODE );
		curl_close( $ch );
		$this->assertSame( 302, $status, "POST $path" );
		$this->assertNotSame( '', $location );
		return $location;
	}

	/** The settings form as options.php takes it: the four fields and the nonce. */
	private function save_settings( array $fields, array $cookies ): string {
		$page     = '/wp-admin/options-general.php?page=varnish-edge';
		$location = $this->post_form(
			'/wp-admin/options.php',
			array(
				'option_page'           => 'varnish_edge',
				'action'                => 'update',
				'_wpnonce'              => wp_create_nonce( 'varnish_edge-options' ),
				'_wp_http_referer'      => $page,
				Settings::OPTION        => $fields,
			),
			$cookies
		);
		$this->assertStringContainsString( 'settings-updated=true', $location );
		$html = Environment::fetch( $location, $cookies );
		$this->assertSame( 200, $html['status'] );
		wp_cache_delete( 'alloptions', 'options' );
		wp_cache_delete( Settings::OPTION, 'options' );
		return $html['body'];
	}

	/**
	 * Settings → Varnish Edge over HTTP, as a site owner who never edits wp-config.php: the purger
	 * URL (its endpoint pasted in is trimmed to the base URL) and the secret are saved; the secret
	 * is never printed back, the page says it is set and takes a new one to replace it; an
	 * empty field keeps it; a bad scheme is refused with a message naming the field; "Test
	 * connection" reports what the purger answered.
	 */
	public function test_settings_page_saves_url_and_secret_and_never_shows_the_secret() {
		$saved = get_option( Settings::OPTION );
		update_option( Settings::OPTION, array_merge( $saved, array( 'purger_url' => '', 'secret' => '' ) ) );
		$cookies = $this->admin_session();
		$page    = '/wp-admin/options-general.php?page=varnish-edge';
		try {
			$before = Environment::fetch( $page, $cookies )['body'];
			$this->assertStringContainsString( 'Not set.', $before );
			$this->assertFalse( Plugin::instance()->settings->is_configured() );

			$html = $this->save_settings(
				array(
					'purger_url' => Environment::purger_url() . '/v1/events',
					'secret'     => Environment::SECRET,
					'namespace'  => Environment::NS,
					'ttl'        => '86400',
				),
				$cookies
			);
			$now = get_option( Settings::OPTION );
			$this->assertSame( Environment::purger_url(), $now['purger_url'], 'the endpoint pasted in is saved as the base URL' );
			$this->assertSame( Environment::SECRET, $now['secret'] );
			$this->assertTrue( Plugin::instance()->settings->is_configured() );
			$this->assertStringContainsString( 'Purger URL: Saved as ' . Environment::purger_url() . ', the purger&#039;s base URL', $html );
			$this->assertSame( 1, substr_count( $html, 'Purger URL: Saved as' ), 'the notice is shown once' );
			$this->assertStringNotContainsString( Environment::SECRET, $html, 'the secret is never printed' );
			$this->assertStringNotContainsString( substr( Environment::SECRET, 6, 12 ), $html, 'not even a part of it' );
			$this->assertMatchesRegularExpression( '/<input type="password" id="varnish-edge-secret" name="varnish_edge_settings\[secret\]" class="regular-text" value="" /', $html );
			$this->assertStringContainsString( 'Set: 1 secret (not shown).', $html );
			$this->assertStringContainsString( 'Type a new secret to replace it, or leave the field empty to keep it.', $html );
			$this->assertStringContainsString( 'value="' . Environment::purger_url() . '"', $html, 'the URL is shown back' );

			// Replaced by a new secret; an empty field keeps the stored one.
			$other = 'whsec_' . base64_encode( str_repeat( 'r', 24 ) );
			$html  = $this->save_settings( array( 'secret' => $other ), $cookies );
			$this->assertSame( $other, get_option( Settings::OPTION )['secret'] );
			$this->assertStringNotContainsString( $other, $html );
			$this->save_settings( array( 'secret' => '' ), $cookies );
			$this->assertSame( $other, get_option( Settings::OPTION )['secret'], 'an empty field keeps the secret' );
			$this->save_settings( array( 'secret' => Environment::SECRET ), $cookies );

			// A bad scheme: refused, the previous URL kept, the field named.
			$html = $this->save_settings( array( 'purger_url' => 'ftp://purger:8090' ), $cookies );
			$this->assertSame( Environment::purger_url(), get_option( Settings::OPTION )['purger_url'] );
			$this->assertStringContainsString( 'Purger URL: The purger URL must start with http:// or https://', $html );
			$this->assertSame( 1, substr_count( $html, 'Purger URL: The purger URL must start' ), 'the error is shown once' );

			// Test connection: the admin-post form, its notice after the redirect.
			Environment::clear_webhooks();
			$location = $this->post_form(
				'/wp-admin/admin-post.php',
				array(
					'action'   => 'varnish_edge_test',
					'_wpnonce' => wp_create_nonce( 'varnish_edge_test' ),
				),
				$cookies
			);
			$this->assertStringContainsString( 'page=varnish-edge', $location );
			$html = Environment::fetch( $location, $cookies )['body'];
			$this->assertStringContainsString( 'Connection OK: ' . Environment::purger_url() . '/v1/events accepted a signed test event (HTTP 202).', $html );
			$this->assertTrue( Environment::webhooks()[0]['signature_ok'], 'signed with the secret typed into the page' );
		} finally {
			update_option( Settings::OPTION, $saved );
		}
	}

	/** Bad purger URLs: the message says what went wrong and names the field to fix. */
	public function test_test_connection_names_the_field_to_fix() {
		$saved = get_option( Settings::OPTION );
		$with  = function ( array $changes ) use ( $saved ) {
			update_option( Settings::OPTION, array_merge( $saved, $changes ) );
			return $this->admin->test_connection();
		};
		try {
			$empty = $with( array( 'purger_url' => '' ) );
			$this->assertFalse( $empty['ok'] );
			$this->assertSame( 'Test failed: the Purger URL field is empty. Enter the purger\'s base URL, such as http://purger:8090, and save.', $empty['message'] );

			// A path the purger does not serve.
			$path = $with( array( 'purger_url' => Environment::purger_url() . '/purger' ) );
			$this->assertFalse( $path['ok'] );
			$this->assertStringContainsString( 'HTTP 404', $path['message'] );
			$this->assertStringContainsString( 'nothing accepts events at ' . Environment::purger_url() . '/purger/v1/events', $path['message'] );
			$this->assertStringEndsWith( 'Fix the Purger URL field.', $path['message'] );

			// Nothing listens there.
			$port = Environment::free_ports( 1 )[0];
			$down = $with( array( 'purger_url' => 'http://127.0.0.1:' . $port ) );
			$this->assertFalse( $down['ok'] );
			$this->assertStringContainsString( 'Could not reach the purger at http://127.0.0.1:' . $port . '/v1/events', $down['message'] );
			$this->assertStringEndsWith( 'Check the Purger URL field (scheme, host and port), and that the purger is running and reachable from this server.', $down['message'] );

			$secret = $with( array( 'secret' => '' ) );
			$this->assertSame( 'Test failed: the Webhook secret(s) field holds no valid whsec_ secret. Paste the secret the purger holds for this site, and save.', $secret['message'] );

			$wrong = $with( array( 'secret' => 'whsec_' . base64_encode( str_repeat( 'w', 24 ) ) ) );
			$this->assertStringContainsString( 'HTTP 401 (signature)', $wrong['message'] );
			$this->assertStringEndsWith( 'Check the Webhook secret(s) field.', $wrong['message'] );
		} finally {
			update_option( Settings::OPTION, $saved );
		}
	}

	/**
	 * What the purger answered, from its error code only: a 403 for a site host outside its
	 * PURGER_SITES says so and names SITE_HOST; a secret bound to another site says that; the
	 * purger's own message text is never repeated.
	 */
	public function test_test_connection_reports_what_the_purger_refused() {
		$site = Environment::site();
		Environment::receiver_control( 'json 403 ' . wp_json_encode( array( 'error' => 'forbidden_site', 'message' => "site \"$site\" is not in this purger's allow-list (PURGER_SITES)", 'field' => '/site' ) ) );
		$sites = $this->admin->test_connection();
		$this->assertFalse( $sites['ok'] );
		$this->assertStringStartsWith( 'Test failed: The purger answered HTTP 403 (forbidden_site): site host not accepted. A purger accepts only the site hosts listed in its PURGER_SITES setting', $sites['message'] );
		$this->assertStringContainsString( "Set SITE_HOST=$site on the edge", $sites['message'] );
		$this->assertStringNotContainsString( 'allow-list', $sites['message'], 'the purger\'s own words are not repeated' );

		Environment::receiver_control( 'json 403 ' . wp_json_encode( array( 'error' => 'forbidden_site', 'message' => "the secret that signed this request is not allowed to invalidate site \"$site\"", 'field' => '/site' ) ) );
		$bound = $this->admin->test_connection();
		$this->assertStringContainsString( 'HTTP 403 (forbidden_site): the secret is bound to another site in the purger\'s PURGER_WEBHOOK_SECRETS', $bound['message'] );

		Environment::receiver_control( 'json 403 ' . wp_json_encode( array( 'error' => '<b>made up</b>', 'message' => 'whatever' ) ) );
		$other = $this->admin->test_connection();
		$this->assertStringContainsString( 'The purger answered HTTP 403: it does not accept the site host ' . $site, $other['message'] );
		$this->assertStringNotContainsString( 'made up', $other['message'] );

		Environment::receiver_control( 'json 503 ' . wp_json_encode( array( 'error' => 'storage_full', 'message' => 'Redis is out of memory' ) ) );
		$full = $this->admin->test_connection();
		$this->assertStringContainsString( 'HTTP 503 (storage_full): it is temporarily unavailable', $full['message'] );
		$this->assertStringNotContainsString( 'Redis', $full['message'] );
	}

	/* --------------------------------------------- Site Health: did the last change go live */

	/** Answer the plugin's receipts query (POST <purger>/v1/receipts) as the purger would. */
	private function purger_answers( array $answer, ?array &$asked = null ): void {
		if ( $this->purger_answer ) {
			remove_filter( 'pre_http_request', $this->purger_answer, 10 );
		}
		$this->purger_answer = static function ( $preempt, $args, $url ) use ( $answer, &$asked ) {
			if ( Environment::purger_url() . '/v1/receipts' !== $url ) {
				return $preempt;
			}
			$asked = json_decode( $args['body'], true );
			return array(
				'headers'  => array( 'content-type' => 'application/json' ),
				'body'     => wp_json_encode( $answer ),
				'response' => array(
					'code'    => 200,
					'message' => 'OK',
				),
				'cookies'  => array(),
				'filename' => null,
			);
		};
		add_filter( 'pre_http_request', $this->purger_answer, 10, 3 );
	}

	/** A receipts answer with these nodes. */
	private static function receipts( array $nodes, array $missing = array() ): array {
		$live = count( array_filter( $nodes, static fn( $n ) => 'applied' === $n['state'] ) );
		return array(
			'site'     => Environment::site(),
			'total'    => count( $nodes ),
			'live'     => $live,
			'complete' => ! $missing && count( $nodes ) > 0 && count( $nodes ) === $live,
			'liveAt'   => gmdate( 'Y-m-d\TH:i:s.000\Z' ),
			'ms'       => 184,
			'missing'  => $missing,
			'nodes'    => $nodes,
		);
	}

	/** The report's lines and status, as Site Health shows them. */
	private function edge(): array {
		$result = $this->health()->run();
		return array( $result['status'], wp_strip_all_tags( str_replace( '</p><p>', "\n", $result['description'] ) ), $result['label'] );
	}

	public function test_site_health_says_whether_the_last_change_reached_every_edge_node() {
		delete_option( Live_Status_Log::LAST_OPTION );
		list( $status, $text ) = $this->edge();
		$this->assertSame( 'good', $status );
		$this->assertStringStartsWith( 'No change has been sent to the edge yet.', $text );

		$id = self::$ids['bravo'];
		wp_update_post( array( 'ID' => $id, 'post_content' => 'b ' . microtime( true ) ) );
		$this->end_request();
		$last = Plugin::instance()->live_log->last_change();
		$this->assertSame( $id, $last['post'] );
		$this->assertSame( array_column( Environment::accepted_events(), 'id' ), $last['ids'] );
		$what = '(post ' . $id . ', ' . wp_date( 'Y-m-d H:i:s', intdiv( $last['at'], 1000 ) ) . ')';

		// The suite's receiver answers no receipts: said, and not a problem of delivery.
		list( $status, $text ) = $this->edge();
		$this->assertSame( 'good', $status );
		$this->assertStringStartsWith( "Whether the last change $what reached every edge node is not known: The purger answered HTTP 404", $text );

		$this->purger_answers( self::receipts( array( array( 'node' => 'a:80', 'state' => 'applied' ), array( 'node' => 'b:80', 'state' => 'applied' ) ) ), $asked );
		list( $status, $text ) = $this->edge();
		$this->assertSame( 'good', $status );
		$this->assertStringStartsWith( "The last change $what was applied by all 2 edge nodes in ", $text );
		$this->assertSame( $last['ids'], $asked['ids'], 'the receipts of exactly its events' );
		$this->assertSame( Environment::site(), $asked['site'] );

		$this->purger_answers( self::receipts( array( array( 'node' => 'a:80', 'state' => 'applied' ) ) ) );
		$this->assertMatchesRegularExpression( '/^The last change \(post \d+, [^)]+\) was applied by its only edge node in \d+ ms\./', $this->edge()[1] );

		$this->purger_answers(
			self::receipts(
				array(
					array( 'node' => 'a:80', 'state' => 'applied' ),
					array( 'node' => 'b:80', 'state' => 'pending', 'error' => 'PURGEKEYS to 10.0.0.5:80 failed: ECONNREFUSED', 'detail' => 'retrying every 5 s' ),
				)
			)
		);
		list( $status, $text, $label ) = $this->edge();
		$this->assertSame( 'recommended', $status );
		$this->assertSame( 'The last change is not applied on every edge node yet', $label );
		$this->assertStringStartsWith( "The last change $what was applied by 1 of 2 edge nodes.\nEdge node b:80 did not apply it: down (connection refused), retrying.\n", $text );

		$this->purger_answers(
			self::receipts(
				array(
					array( 'node' => 'a:80', 'state' => 'failed', 'error' => 'BAN refused: 400' ),
					array( 'node' => 'b:80', 'state' => 'pending' ),
				)
			)
		);
		list( $status, $text, $label ) = $this->edge();
		$this->assertSame( 'critical', $status );
		$this->assertSame( 'An edge node did not apply the last change', $label );
		$this->assertStringContainsString( "was applied by 0 of 2 edge nodes.\nEdge node a:80 did not apply it: it failed (BAN refused: 400).\nEdge node b:80 has not applied it yet.", $text );

		$this->purger_answers( self::receipts( array(), array() ) );
		list( $status, $text ) = $this->edge();
		$this->assertSame( 'critical', $status );
		$this->assertStringStartsWith( "The purger knows no edge node: the last change $what was applied nowhere.", $text );

		$this->purger_answers( self::receipts( array( array( 'node' => 'a:80', 'state' => 'applied' ) ), $last['ids'] ) );
		list( $status, $text ) = $this->edge();
		$this->assertSame( 'good', $status, 'delivered (the outbox is empty): the purger forgot it' );
		$this->assertStringStartsWith( "The purger has no receipt of the last change $what", $text );

		// Older than the purger keeps receipts: not asked.
		$old       = get_option( Live_Status_Log::LAST_OPTION );
		$old['at'] = ( time() - 2 * DAY_IN_SECONDS ) * 1000;
		update_option( Live_Status_Log::LAST_OPTION, $old );
		$asked = null;
		$this->assertStringContainsString( 'is older than the purger keeps receipts (a day)', $this->edge()[1] );
		$this->assertNull( $asked );
	}

	/** The last change names the posts of its request, or says what it was. */
	public function test_site_health_names_the_last_change() {
		$this->purger_answers( self::receipts( array( array( 'node' => 'a:80', 'state' => 'applied' ) ) ) );
		wp_update_post( array( 'ID' => self::$ids['alpha'], 'post_content' => 'a ' . microtime( true ) ) );
		wp_update_post( array( 'ID' => self::$ids['charlie'], 'post_content' => 'c ' . microtime( true ) ) );
		$this->end_request();
		$this->assertStringStartsWith( 'The last change (posts ' . self::$ids['alpha'] . ' and ' . self::$ids['charlie'] . ', ', $this->edge()[1] );

		Plugin::instance()->queue->add( Plugin::instance()->manual->all( 'admin' ) );
		$this->end_request();
		$this->assertStringStartsWith( 'The last change (manual purge of the whole site by admin, ', $this->edge()[1] );
		$this->assertSame( 0, Plugin::instance()->live_log->last_change()['post'] );

		// Unconfigured, nothing is sent: nothing is written down either.
		$before = get_option( Live_Status_Log::LAST_OPTION );
		$saved  = get_option( Settings::OPTION );
		update_option( Settings::OPTION, array_merge( $saved, array( 'purger_url' => '' ) ) );
		try {
			wp_update_post( array( 'ID' => self::$ids['alpha'], 'post_content' => 'a ' . microtime( true ) ) );
			$this->end_request();
			$this->assertSame( $before, get_option( Live_Status_Log::LAST_OPTION ) );
		} finally {
			update_option( Settings::OPTION, $saved );
		}
	}
}
