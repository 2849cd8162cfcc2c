<?php
use VarnishEdge\Admin_Page;
use VarnishEdge\CLI_Command;
use VarnishEdge\Live_Status;
use VarnishEdge\Live_Status_Log;
use VarnishEdge\Plugin;
use VarnishEdge\Settings;
use VarnishEdge\Site_Health;

/**
 * The live status of a person's change: `GET /wp-json/varnish-edge/v1/live-status`, its
 * permissions, and its message from the receipts of a real purger (testkit's Redis, Varnish and
 * the built purger, with a secret bound to the test site) as nodes apply, or fail to apply, a save.
 */
class LiveStatusTest extends VE_TestCase {

	/** @var Purger_Stack|null The real purger (tests/support/PurgerStack.php). */
	private $stack;

	/** @var array{url:string,nodes:string[]} Where it listens, its nodes. */
	private $purger;

	/** @var array<string,mixed> Settings before the test. */
	private $saved;

	protected function setUp(): void {
		parent::setUp();
		$this->saved = get_option( Settings::OPTION );
	}

	protected function tearDown(): void {
		update_option( Settings::OPTION, $this->saved );
		$this->stack?->stop();
		$this->stack = null;
		wp_set_current_user( 1 );
		parent::tearDown();
	}

	/** GET the route as a user (0: logged out). */
	private function live_status( int $user, array $query = array() ): WP_REST_Response {
		wp_set_current_user( $user );
		$request = new WP_REST_Request( 'GET', '/varnish-edge/v1/live-status' );
		foreach ( $query as $name => $value ) {
			$request->set_param( $name, $value );
		}
		return rest_do_request( $request );
	}

	private function user( string $role ): int {
		return (int) wp_insert_user( array( 'user_login' => $role . wp_generate_password( 6, false ), 'user_pass' => 'x', 'role' => $role ) );
	}

	public function test_who_may_read_the_status_of_what(): void {
		$subscriber = $this->user( 'subscriber' );
		$editor     = $this->user( 'editor' );
		$alice      = self::$ids['alice'];
		$admins     = self::$ids['alpha'];
		$hers       = self::$ids['bravo'];

		$this->assertSame( 401, $this->live_status( 0, array( 'post' => $hers ) )->get_status(), 'logged out' );
		$this->assertSame( 403, $this->live_status( $subscriber, array( 'post' => $hers ) )->get_status(), 'a subscriber edits no post' );
		$this->assertSame( 403, $this->live_status( $alice, array( 'post' => $admins ) )->get_status(), 'an author, another\'s post' );
		$this->assertSame( 200, $this->live_status( $alice, array( 'post' => $hers ) )->get_status(), 'an author, her own post' );
		$this->assertSame( 200, $this->live_status( $editor, array( 'post' => $hers ) )->get_status(), 'an editor edits others\' posts' );

		$missing = $this->live_status( 1, array( 'post' => 999999 ) );
		$this->assertSame( 403, $missing->get_status(), 'no post: refused like a post one may not edit' );
		$this->assertSame( 'Sorry, you are not allowed to see the status of this post.', $missing->get_data()['message'] );
		foreach ( array( 'abc', '0', '-4', '1.5' ) as $bad ) {
			$response = $this->live_status( 1, array( 'post' => $bad ) );
			$this->assertSame( 400, $response->get_status(), $bad );
			$this->assertSame( 'rest_invalid_param', $response->get_data()['code'], $bad );
		}

		$this->assertSame( 403, $this->live_status( $editor )->get_status(), 'manual purges: the purge capability' );
		$this->assertSame( 200, $this->live_status( 1 )->get_status() );
		wp_delete_user( $subscriber );
		wp_delete_user( $editor );
	}

	/**
	 * Security review: the route answered "There is no post with ID N" (404) before checking
	 * permissions, so anyone could tell which ids exist (drafts, revisions, private types). Now a
	 * post one may not edit and an id that is no post get the very same answer.
	 */
	public function test_strangers_cannot_tell_which_post_ids_exist(): void {
		global $wpdb;
		$subscriber = $this->user( 'subscriber' );
		$draft      = self::$ids['draft']; // The administrator's draft.
		$private    = wp_insert_post( array( 'post_title' => 'Private', 'post_status' => 'private', 'post_content' => 'x' ) );
		$missing    = (int) $wpdb->get_var( "SELECT MAX(ID) FROM {$wpdb->posts}" ) + 1000;
		$answer     = function ( int $user, int $post ): array {
			$response = $this->live_status( $user, array( 'post' => $post ) );
			return array( $response->get_status(), $response->get_data(), $response->get_headers() );
		};

		foreach ( array( 'anonymous' => 0, 'subscriber' => $subscriber, 'an author' => self::$ids['alice'] ) as $who => $user ) {
			$none = $answer( $user, $missing );
			$this->assertSame( 0 === $user ? 401 : 403, $none[0], $who );
			$this->assertSame( 'rest_forbidden', $none[1]['code'], $who );
			$this->assertSame( $none, $answer( $user, $draft ), "$who: a draft and no post answer alike" );
			$this->assertSame( $none, $answer( $user, $private ), "$who: a private post and no post answer alike" );
			$this->assertStringNotContainsString( (string) $missing, wp_json_encode( $none ), $who );
		}
		$this->assertSame( 200, $this->live_status( 1, array( 'post' => $draft ) )->get_status(), 'the draft\'s author may' );
		wp_delete_post( $private, true );
		wp_delete_user( $subscriber );
	}

	/** Save a post as a user, as an editor's request does, up to its end (the batch delivered). */
	private function save_as( int $user, int $post ): void {
		wp_set_current_user( $user );
		wp_update_post( array( 'ID' => $post, 'post_content' => "saved by $user " . microtime( true ) ) );
		$this->end_request();
		wp_set_current_user( 1 );
	}

	/**
	 * The block editor polls the route: with the purger accepting connections and never answering,
	 * each poll held a PHP worker for the whole webhook timeout. The failure is remembered per site
	 * (Live_Status::DOWN_FOR): polls in a row, of any user, open one connection in all, and say when
	 * to ask again (`retryAfter`). Security review: the purger's URL and the transport error are
	 * shown only to those who may purge. Counted connections, not time: this asserts no duration.
	 */
	public function test_a_silent_purger_is_asked_once_while_remembered_and_named_only_to_purgers(): void {
		$alice = self::$ids['alice'];
		$hers  = self::$ids['delta'];
		$mine  = self::$ids['foxtrot'];
		$this->save_as( 1, $mine ); // Delivered to the suite's receiver: the saves have event ids.
		$this->save_as( $alice, $hers );

		$silent = stream_socket_server( 'tcp://127.0.0.1:0', $errno, $error ); // Never accepts: the kernel completes the handshakes.
		$this->assertNotFalse( $silent, $error );
		$address = stream_socket_get_name( $silent, false );
		update_option( Settings::OPTION, array_merge( $this->saved, array( 'purger_url' => "http://$address" ) ) );

		$polls = array();
		for ( $i = 0; $i < 4; $i++ ) {
			$polls[] = $this->live_status( 1, array( 'post' => $mine ) );
		}
		$authors = array();
		for ( $i = 0; $i < 2; $i++ ) {
			$authors[] = $this->live_status( $alice, array( 'post' => $hers ) );
		}
		$connections = self::accept_all( $silent );
		fclose( $silent );
		$this->assertSame( 1, $connections, 'six polls, one connection to the silent purger' );

		foreach ( array_merge( $polls, $authors ) as $i => $response ) {
			$data = $response->get_data();
			$this->assertSame( 200, $response->get_status(), "poll $i" );
			$this->assertSame( 'failed', $data['state'], "poll $i" );
			$this->assertGreaterThan( 0, $data['retryAfter'], "poll $i" );
			$this->assertLessThanOrEqual( Live_Status::DOWN_FOR, $data['retryAfter'], "poll $i" );
			$this->assertSame( (string) $data['retryAfter'], $response->get_headers()['Retry-After'], "poll $i" );
		}
		foreach ( $polls as $response ) {
			$this->assertStringStartsWith( "Could not read the edge status: Could not reach the purger at http://$address/v1/receipts: ", $response->get_data()['message'], 'the administrator may purge: details' );
		}
		foreach ( $authors as $response ) {
			$data = $response->get_data();
			$this->assertSame( 'Could not read the edge status: the purger cannot be reached right now.', $data['message'], 'an author: no URL, no transport error' );
			$this->assertStringNotContainsString( (string) wp_parse_url( "http://$address", PHP_URL_PORT ), wp_json_encode( $data ) );
			$this->assertSame( '', $data['statusUrl'], 'an author cannot open the status panel' );
		}

		// Another purger URL is not the remembered one: it is asked at once.
		$other = stream_socket_server( 'tcp://127.0.0.1:0', $errno, $error );
		$this->assertNotFalse( $other, $error );
		update_option( Settings::OPTION, array_merge( $this->saved, array( 'purger_url' => 'http://' . stream_socket_get_name( $other, false ) ) ) );
		$this->live_status( 1, array( 'post' => $mine ) );
		$this->assertSame( 1, self::accept_all( $other ), 'a new purger URL is asked' );
		fclose( $other );
	}

	/**
	 * Accept every connection waiting on a listener (those the client has closed since count too);
	 * how many there were.
	 *
	 * @param resource $listener A stream_socket_server().
	 */
	private static function accept_all( $listener ): int {
		$count = 0;
		while ( true ) {
			$read  = array( $listener );
			$none  = null;
			$ready = stream_select( $read, $none, $none, 0, 200000 );
			if ( ! $ready ) {
				return $count;
			}
			$connection = stream_socket_accept( $listener, 0 );
			if ( ! $connection ) {
				return $count;
			}
			fclose( $connection );
			++$count;
		}
	}

	/**
	 * Security review: node names and addresses and their errors are for those who may purge (the
	 * administrator; an editor when `varnish_edge_purge_capability` says so); an author, or an
	 * editor who may not purge, gets counts. A real purger, its only node stopped.
	 */
	public function test_node_names_and_errors_only_for_those_who_may_purge(): void {
		$this->start_purger();
		$node   = $this->purger['nodes'][0];
		$editor = $this->user( 'editor' );
		$alice  = self::$ids['alice'];
		$hers   = self::$ids['golf'];
		$this->node( 'stop' );
		$this->save_as( $alice, $hers );
		$this->save_as( $editor, $hers );
		$this->save_as( 1, $hers );

		$admin = $this->until( $hers, static fn( $s ) => 'partial' === $s['state'], 15 );
		$this->assertStringContainsString( "$node has not applied it: down (connection refused)", $admin['message'] );
		$this->assertSame( $node, $admin['nodes'][0]['node'] );

		$counted = static function ( array $data, string $who ) use ( $node ): void {
			self::assertSame( 'partial', $data['state'], $who );
			self::assertSame( 'Live on 0 of 1 edge node; 1 node is down', $data['message'], $who );
			self::assertSame( array( 0, 1 ), array( $data['live'], $data['total'] ), $who );
			self::assertSame( array(), $data['nodes'], $who );
			self::assertSame( '', $data['statusUrl'], $who );
			$json = wp_json_encode( $data );
			foreach ( array( $node, '127.0.0.1', 'connection refused' ) as $secret ) {
				self::assertStringNotContainsString( $secret, $json, "$who: $secret" );
			}
		};
		$counted( $this->live_status( $alice, array( 'post' => $hers ) )->get_data(), 'the author of the post' );
		$counted( $this->live_status( $editor, array( 'post' => $hers ) )->get_data(), 'an editor who may not purge' );

		$may_purge = static fn(): string => 'edit_others_posts';
		add_filter( 'varnish_edge_purge_capability', $may_purge );
		try {
			$data = $this->live_status( $editor, array( 'post' => $hers ) )->get_data();
		} finally {
			remove_filter( 'varnish_edge_purge_capability', $may_purge );
		}
		$this->assertStringContainsString( "$node has not applied it: down (connection refused)", $data['message'], 'an editor who may purge' );
		$this->assertSame( $node, $data['nodes'][0]['node'] );
		$this->assertSame( '', $data['statusUrl'], 'the status panel needs manage_options' );
		wp_delete_user( $editor );
	}

	public function test_a_save_is_written_down_with_the_events_it_produced(): void {
		$id = self::$ids['charlie'];
		wp_update_post( array( 'ID' => $id, 'post_content' => 'charlie ' . microtime( true ) ) );
		$during = $this->live_status( 1, array( 'post' => $id ) )->get_data();
		$this->assertSame( 'pending', $during['state'], 'asked before the batch is built' );
		$this->assertSame( 'Sending to the purger…', $during['message'] );
		$this->end_request();

		$entry = Plugin::instance()->live_log->latest( 1, $id );
		$this->assertSame( array_column( Environment::accepted_events(), 'id' ), $entry['ids'] );
		$this->assertNull( Plugin::instance()->live_log->latest( self::$ids['alice'], $id ), 'per user' );

		// The suite's receiver does not answer receipts: the status says so, as a 200.
		$after = $this->live_status( 1, array( 'post' => $id ) );
		$this->assertSame( 200, $after->get_status() );
		$this->assertSame( 'failed', $after->get_data()['state'] );
		$this->assertStringContainsString( 'Could not read the edge status', $after->get_data()['message'] );
		$this->assertStringContainsString( 'options-general.php?page=varnish-edge', $after->get_data()['statusUrl'] );

		$draft = self::$ids['draft'];
		wp_update_post( array( 'ID' => $draft, 'post_content' => 'still a draft ' . microtime( true ) ) );
		$this->end_request();
		Plugin::instance()->live_log->on_shutdown();
		$this->assertSame( 'none', $this->live_status( 1, array( 'post' => $draft ) )->get_data()['state'], 'a draft purges nothing' );
	}

	/**
	 * Starts the real purger and points the plugin at it.
	 *
	 * @param array<string,string> $env More of purger-stack.mjs's environment (ALLOWED_SITE).
	 */
	private function start_purger( array $env = array() ): void {
		$this->stack  = new Purger_Stack( $env );
		$this->purger = $this->stack->purger;
		update_option( Settings::OPTION, array_merge( $this->saved, array( 'purger_url' => $this->purger['url'] ) ) );
	}

	/** Tell the launcher to stop or start node 0. */
	private function node( string $command ): void {
		$this->assertTrue( $this->stack->node( $command ), "the launcher did not $command node 0" );
	}

	/** Ask the route until `$ok` holds (at most `$seconds`); the last answer. */
	private function until( int $post, callable $ok, float $seconds ): array {
		$until = microtime( true ) + $seconds;
		do {
			$data = $this->live_status( 1, array( 'post' => $post ) )->get_data();
			if ( $ok( $data ) ) {
				return $data;
			}
			usleep( 100000 );
		} while ( microtime( true ) < $until );
		$this->fail( 'no such status in time; last: ' . wp_json_encode( $data ) );
	}

	public function test_the_real_purger_says_live_names_a_node_that_is_down_and_live_again(): void {
		$this->start_purger();
		$node = $this->purger['nodes'][0];
		$id   = self::$ids['echo'];

		wp_update_post( array( 'ID' => $id, 'post_content' => 'echo live ' . microtime( true ) ) );
		$this->end_request();
		$live = $this->until( $id, static fn( $s ) => 'live' === $s['state'], 10 );
		$this->assertMatchesRegularExpression( '/^Live on 1 of 1 edge node in \d+ ms$/', $live['message'] );
		// Site Health says the same of the site's last change.
		$edited = '(post ' . $id . ', ' . wp_date( 'Y-m-d H:i:s', intdiv( Plugin::instance()->live_log->last_change()['at'], 1000 ) ) . ')';
		$health = $this->site_health();
		$this->assertSame( 'good', $health['status'] );
		$this->assertMatchesRegularExpression( '/^The last change ' . preg_quote( $edited, '/' ) . ' was applied by its only edge node in \d+ ms\.\n/', $health['text'] );
		$this->assertSame( 1, $live['live'] );
		$this->assertSame( 1, $live['total'] );
		$this->assertLessThan( 10000, $live['ms'] );
		$this->assertSame( $node, $live['nodes'][0]['node'] );
		$this->assertSame( 'applied', $live['nodes'][0]['state'] );

		$this->node( 'stop' );
		wp_update_post( array( 'ID' => $id, 'post_content' => 'echo down ' . microtime( true ) ) );
		$this->end_request();
		$down = $this->until( $id, static fn( $s ) => 'partial' === $s['state'], 15 );
		$this->assertSame( "Live on 0 of 1 edge node; $node has not applied it: down (connection refused), retrying", $down['message'] );
		$edited = '(post ' . $id . ', ' . wp_date( 'Y-m-d H:i:s', intdiv( Plugin::instance()->live_log->last_change()['at'], 1000 ) ) . ')';
		$health = $this->site_health();
		$this->assertSame( 'recommended', $health['status'] );
		$this->assertStringStartsWith( "The last change $edited was applied by 0 of 1 edge node.\nEdge node $node did not apply it: down (connection refused), retrying.\n", $health['text'] );

		$this->node( 'start' );
		$again = $this->until( $id, static fn( $s ) => 'live' === $s['state'], 20 );
		$this->assertMatchesRegularExpression( '/^Live on 1 of 1 edge node in \d+ ms$/', $again['message'] );
	}

	/** The plugin's Site Health test: its status and its text, a line per paragraph. */
	private function site_health(): array {
		$plugin = Plugin::instance();
		$result = ( new Site_Health( $plugin->settings, $plugin->outbox, $plugin->live_log, $plugin->live ) )->run();
		return array(
			'status' => $result['status'],
			'text'   => wp_strip_all_tags( str_replace( '</p><p>', "\n", $result['description'] ) ),
		);
	}

	/**
	 * "Test connection" against a real purger whose PURGER_SITES holds another host: its 403
	 * `forbidden_site` is reported as what it is, with the setting to change; a path the purger
	 * does not serve is its 404, naming the Purger URL field.
	 */
	public function test_the_real_purger_refusing_the_site_host_is_named_in_test_connection(): void {
		$this->start_purger( array( 'ALLOWED_SITE' => 'other.example' ) );
		$plugin = Plugin::instance();
		$admin  = new Admin_Page( $plugin->settings, $plugin->outbox, $plugin->delivery, $plugin->queue, $plugin->manual, $plugin->live_log, $plugin->live );
		$site   = Environment::site();

		$refused = $admin->test_connection();
		$this->assertFalse( $refused['ok'] );
		$this->assertSame(
			"Test failed: The purger answered HTTP 403 (forbidden_site): site host not accepted. A purger accepts only the site hosts listed in its PURGER_SITES setting, and this site's host, $site, is not one of them. Set SITE_HOST=$site on the edge (the stacks copy it into PURGER_SITES), or add $site to PURGER_SITES, and restart the purger.",
			$refused['message']
		);

		update_option( Settings::OPTION, array_merge( get_option( Settings::OPTION ), array( 'purger_url' => $this->purger['url'] . '/api' ) ) );
		$path = $admin->test_connection();
		$this->assertFalse( $path['ok'] );
		$this->assertStringStartsWith( 'Test failed: The purger answered HTTP 404: nothing accepts events at ' . $this->purger['url'] . '/api/v1/events.', $path['message'] );
		$this->assertStringEndsWith( 'Fix the Purger URL field.', $path['message'] );
		$this->assertStringNotContainsString( 'Route', $path['message'], 'the purger\'s own 404 text is not repeated' );
	}

	/** The purger's receipts name nodes that applied a change as a ban of the whole site (`via`). */
	public function test_nodes_that_applied_it_as_a_site_wide_purge_are_named(): void {
		$at     = (int) floor( microtime( true ) * 1000 );
		$answer = static fn( array $nodes, bool $complete ) => array(
			'site'      => Environment::site(),
			'total'     => count( $nodes ),
			'live'      => count( array_filter( $nodes, fn( $n ) => 'applied' === $n['state'] ) ),
			'complete'  => $complete,
			'changedAt' => gmdate( 'Y-m-d\TH:i:s.000\Z', (int) ( $at / 1000 ) ),
			'liveAt'    => gmdate( 'Y-m-d\TH:i:s.000\Z', (int) ( $at / 1000 ) + 1 ),
			'ms'        => 310,
			'missing'   => array(),
			'nodes'     => $nodes,
		);
		$live   = Plugin::instance()->live;
		$status = $live->from_receipts(
			$answer(
				array(
					array( 'node' => 'a:80', 'state' => 'applied', 'via' => 'host-ban' ),
					array( 'node' => 'b:80', 'state' => 'applied', 'via' => 'split' ),
				),
				true
			),
			$at
		);
		$this->assertSame( 'live', $status['state'] );
		$this->assertMatchesRegularExpression( '/^Live on 2 of 2 edge nodes in \d+ ms \(applied as a site-wide purge on 1 node\)$/', $status['message'] );
		$this->assertSame( 'host-ban', $status['nodes'][0]['via'] );

		$plain = $live->from_receipts( $answer( array( array( 'node' => 'a:80', 'state' => 'applied', 'via' => 'split' ) ), true ), $at );
		$this->assertMatchesRegularExpression( '/^Live on 1 of 1 edge node in \d+ ms$/', $plain['message'], 'a split is not worth a word' );

		$waiting = $live->from_receipts(
			$answer(
				array(
					array( 'node' => 'a:80', 'state' => 'applied', 'via' => 'host-ban' ),
					array( 'node' => 'b:80', 'state' => 'pending' ),
				),
				false
			),
			$at
		);
		$this->assertSame( 'Live on 1 of 2 edge nodes; waiting for b:80 (applied as a site-wide purge on 1 node)', $waiting['message'] );
	}

	public function test_manual_purges_wait_and_report_the_same_message(): void {
		$this->start_purger();
		$lines = array();
		$cli   = new CLI_Command(
			static function ( $level, $message ) use ( &$lines ) {
				$lines[] = "$level: $message";
			}
		);
		$cli->purge( array( 'url', home_url( '/about/' ) ) );
		$this->assertSame( 'success: Sent 1 events.', $lines[0] );
		$this->assertMatchesRegularExpression( '/^success: Live on 1 of 1 edge node in \d+ ms$/', $lines[1] );

		$lines = array();
		$cli->purge( array( 'url', home_url( '/about/' ) ), array( 'wait' => false ) );
		$this->assertSame( array( 'success: Sent 1 events.' ), $lines, '--no-wait' );

		$route = $this->live_status( 1 )->get_data();
		$this->assertSame( 'live', $route['state'], 'the latest manual purge of the user' );

		// A secret the purger does not hold for this site reads nothing.
		update_option( Settings::OPTION, array_merge( get_option( Settings::OPTION ), array( 'secret' => 'whsec_' . base64_encode( str_repeat( 'k', 24 ) ) ) ) );
		$status = Plugin::instance()->live->of( array( 'post' => 0, 'at' => Live_Status_Log::now_ms(), 'ids' => array( 'wp-x' ) ) );
		$this->assertSame( 'failed', $status['state'] );
		$this->assertStringContainsString( 'HTTP 401', $status['message'] );
	}
}
