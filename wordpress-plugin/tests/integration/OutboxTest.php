<?php
use VarnishEdge\Outbox;
use VarnishEdge\Plugin;

/**
 * Delivery survives a purger that is down or failing: the durable outbox retries until every
 * event arrives exactly once; saving never fails or waits long.
 */
class OutboxTest extends VE_TestCase {

	private function make_due() {
		global $wpdb;
		$wpdb->query( 'UPDATE ' . Outbox::table() . ' SET next_attempt_at = 0' );
		update_option( 'varnish_edge_outbox_next', 1 );
	}

	public function test_purger_down_then_up_delivers_everything_once() {
		Environment::stop_receiver();
		$expected = array();
		foreach ( array( 'alpha', 'bravo', 'charlie', 'delta', 'echo' ) as $i => $slug ) {
			$start = microtime( true );
			$ok    = wp_update_post( array( 'ID' => self::$ids[ $slug ], 'post_content' => "outage edit $i " . microtime( true ) ), true );
			$this->end_request();
			$this->assertNotWPError( $ok );
			$this->assertLessThan( 10, microtime( true ) - $start, 'a save never waits long on a dead purger' );
			$expected[] = $this->key( 'p-' . self::$ids[ $slug ] );
		}
		$stats = Plugin::instance()->outbox->stats();
		$this->assertSame( 5, $stats['rows'], 'one durable row per request' );
		$this->assertStringContainsString( 'Could not reach the purger', Outbox::status()['last_error'] );
		$this->assertNotFalse( wp_next_scheduled( Outbox::CRON_HOOK ), 'WP-Cron retry scheduled' );

		// Every failed row got a backoff.
		global $wpdb;
		foreach ( $wpdb->get_results( 'SELECT attempts, created_at, next_attempt_at FROM ' . Outbox::table() ) as $row ) {
			$this->assertSame( 1, (int) $row->attempts );
			$this->assertGreaterThanOrEqual( (int) $row->created_at + 15, (int) $row->next_attempt_at );
		}

		// While rows are not due, later requests leave the purger alone.
		$wpdb->query( 'UPDATE ' . Outbox::table() . ' SET next_attempt_at = ' . ( time() + 600 ) );
		Plugin::instance()->outbox->schedule_next();
		Environment::start_receiver();
		$this->end_request();
		Plugin::instance()->outbox->process();
		$this->assertSame( array(), Environment::webhooks() );

		// Backoff expired: the cron hook delivers.
		$this->make_due();
		do_action( Outbox::CRON_HOOK );
		$this->assertSame( 0, Plugin::instance()->outbox->stats()['rows'] );
		$hooks = Environment::webhooks();
		$this->assertCount( 1, $hooks, 'the backlog goes out merged in one webhook' );
		$this->assertTrue( $hooks[0]['signature_ok'] );

		$ids = array_column( Environment::accepted_events(), 'id' );
		$this->assertSame( count( $ids ), count( array_unique( $ids ) ), 'every event once' );
		foreach ( $expected as $key ) {
			$this->assertContains( $key, $this->sent_tags( false ) );
		}

		// Nothing is sent twice afterwards.
		$this->make_due();
		do_action( Outbox::CRON_HOOK );
		Plugin::instance()->outbox->process( true );
		$this->assertCount( 1, Environment::webhooks() );
		$this->assertGreaterThan( time() - 60, Outbox::status()['last_success'] );
	}

	public function test_error_answers_are_retried_with_the_same_webhook_id() {
		Environment::receiver_status( 503 );
		wp_update_post( array( 'ID' => self::$ids['foxtrot'], 'post_content' => 'foxtrot ' . microtime( true ) ) );
		$this->end_request();
		$hooks = Environment::webhooks();
		$this->assertCount( 1, $hooks );
		$this->assertSame( 503, $hooks[0]['status'] );
		$this->assertSame( 1, Plugin::instance()->outbox->stats()['rows'] );
		$this->assertStringContainsString( 'HTTP 503', Outbox::status()['last_error'] );

		global $wpdb;
		$row = $wpdb->get_row( 'SELECT * FROM ' . Outbox::table() );
		$this->assertSame( 1, (int) $row->attempts );
		$this->assertGreaterThan( time() + 5, (int) $row->next_attempt_at, 'backoff' );

		Environment::receiver_status( 0 );
		$this->make_due();
		$this->end_request(); // A later request delivers due rows.
		$hooks = Environment::webhooks();
		$this->assertCount( 2, $hooks );
		$this->assertSame( 202, $hooks[1]['status'] );
		$this->assertSame( $hooks[0]['webhook_id'], $hooks[1]['webhook_id'], 'idempotency key reused' );
		$this->assertSame( array_column( $hooks[0]['body']['events'], 'id' ), array_column( $hooks[1]['body']['events'], 'id' ) );
		$this->assertSame( 0, Plugin::instance()->outbox->stats()['rows'] );
	}

	public function test_outbox_collapses_to_one_full_purge_past_the_limit() {
		Environment::stop_receiver();
		$outbox = Plugin::instance()->outbox;
		for ( $i = 0; $i <= Outbox::MAX_ROWS; $i++ ) {
			$outbox->enqueue( Environment::site(), array( array( 'id' => "wp-c$i", 'kind' => 'tags', 'tags' => array( "wpt-x-$i" ), 'soft' => false, 'reason' => 'r', 'time' => gmdate( 'Y-m-d\TH:i:s\Z' ) ) ) );
		}
		$stats = $outbox->stats();
		$this->assertSame( 1, $stats['rows'] );
		Environment::start_receiver();
		$outbox->process( true );
		$events = Environment::accepted_events();
		$this->assertCount( 1, $events );
		$this->assertSame( 'all', $events[0]['kind'] );
	}

	public function test_rows_are_locked_while_being_sent() {
		global $wpdb;
		$outbox = Plugin::instance()->outbox;
		Environment::stop_receiver();
		$outbox->enqueue( Environment::site(), array( array( 'id' => 'wp-lock1', 'kind' => 'all', 'soft' => false, 'reason' => 'r', 'time' => gmdate( 'Y-m-d\TH:i:s\Z' ) ) ) );
		Environment::start_receiver();
		// Another process holds the lock on the row.
		$wpdb->query( $wpdb->prepare( 'UPDATE ' . Outbox::table() . ' SET lock_token = %s, locked_until = %d, next_attempt_at = 0', 'other', time() + 60 ) );
		$report = $outbox->process( true );
		$this->assertSame( 0, $report['sent'] );
		$this->assertSame( array(), Environment::webhooks() );
		// The lock expires (its holder died): the row is sent.
		$wpdb->query( 'UPDATE ' . Outbox::table() . ' SET locked_until = 1' );
		$report = $outbox->process( true );
		$this->assertSame( 1, $report['sent'] );
		$this->assertCount( 1, Environment::accepted_events() );
	}

	public function test_hanging_purger_costs_at_most_the_timeout() {
		// A listener that accepts connections but never answers.
		$server = stream_socket_server( 'tcp://127.0.0.1:0' );
		$port   = (int) substr( strrchr( stream_socket_get_name( $server, false ), ':' ), 1 );
		$saved  = get_option( 'varnish_edge_settings' );
		update_option( 'varnish_edge_settings', array_merge( $saved, array( 'purger_url' => 'http://127.0.0.1:' . $port ) ) );
		try {
			$start = microtime( true );
			$ok    = wp_update_post( array( 'ID' => self::$ids['golf'], 'post_content' => 'golf ' . microtime( true ) ), true );
			$this->end_request();
			$elapsed = microtime( true ) - $start;
			$this->assertNotWPError( $ok );
			$this->assertLessThan( 15, $elapsed, 'bounded by the ~2 s timeout (generous for a loaded machine)' );
			$this->assertGreaterThanOrEqual( 1.5, $elapsed, 'the client really waited for the timeout' );
			$this->assertSame( 1, Plugin::instance()->outbox->stats()['rows'] );
		} finally {
			update_option( 'varnish_edge_settings', $saved );
			fclose( $server );
		}
	}

	public function test_table_is_created_when_activated_by_option() {
		global $wpdb;
		// install.php activated the plugin by writing active_plugins: no activation hook ran.
		$this->assertSame( Outbox::table(), $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Outbox::table() ) ) );
		$this->assertSame( Outbox::DB_VERSION, get_option( Outbox::DB_OPTION ) );
		Outbox::install(); // Idempotent.
		$this->assertSame( Outbox::table(), $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Outbox::table() ) ) );
	}

	private function assertNotWPError( $value ) {
		$this->assertFalse( is_wp_error( $value ), is_wp_error( $value ) ? $value->get_error_message() : '' );
	}
}
