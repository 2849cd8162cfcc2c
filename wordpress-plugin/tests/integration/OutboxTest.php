<?php
use VarnishEdge\Outbox_Delivery;
use VarnishEdge\Outbox_Store;
use VarnishEdge\Outbox_Table;
use VarnishEdge\Plugin;

/**
 * Delivery survives a purger that is down or failing: the durable outbox retries until every
 * event arrives exactly once; saving never fails or waits long.
 */
class OutboxTest extends VE_TestCase {

	private function make_due() {
		global $wpdb;
		$wpdb->query( 'UPDATE ' . Outbox_Table::name() . ' SET next_attempt_at = 0' );
		update_option( Outbox_Store::NEXT_DUE_OPTION, 1 );
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
		$this->assertStringContainsString( 'Could not reach the purger', Outbox_Delivery::status()['last_error'] );
		$this->assertNotFalse( wp_next_scheduled( Outbox_Delivery::CRON_HOOK ), 'WP-Cron retry scheduled' );

		// Every failed row got a backoff.
		global $wpdb;
		foreach ( $wpdb->get_results( 'SELECT attempts, created_at, next_attempt_at FROM ' . Outbox_Table::name() ) as $row ) {
			$this->assertSame( 1, (int) $row->attempts );
			$this->assertGreaterThanOrEqual( (int) $row->created_at + 15, (int) $row->next_attempt_at );
		}

		// While rows are not due, later requests leave the purger alone.
		$wpdb->query( 'UPDATE ' . Outbox_Table::name() . ' SET next_attempt_at = ' . ( time() + 600 ) );
		Plugin::instance()->delivery->schedule_next();
		Environment::start_receiver();
		$this->end_request();
		Plugin::instance()->delivery->process();
		$this->assertSame( array(), Environment::webhooks() );

		// Backoff expired: the cron hook delivers.
		$this->make_due();
		do_action( Outbox_Delivery::CRON_HOOK );
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
		do_action( Outbox_Delivery::CRON_HOOK );
		Plugin::instance()->delivery->process( true );
		$this->assertCount( 1, Environment::webhooks() );
		$this->assertGreaterThan( time() - 60, Outbox_Delivery::status()['last_success'] );
	}

	public function test_error_answers_are_retried_with_the_same_webhook_id() {
		Environment::receiver_status( 503 );
		wp_update_post( array( 'ID' => self::$ids['foxtrot'], 'post_content' => 'foxtrot ' . microtime( true ) ) );
		$this->end_request();
		$hooks = Environment::webhooks();
		$this->assertCount( 1, $hooks );
		$this->assertSame( 503, $hooks[0]['status'] );
		$this->assertSame( 1, Plugin::instance()->outbox->stats()['rows'] );
		$this->assertStringContainsString( 'HTTP 503', Outbox_Delivery::status()['last_error'] );

		global $wpdb;
		$row = $wpdb->get_row( 'SELECT * FROM ' . Outbox_Table::name() );
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
		$outbox   = Plugin::instance()->outbox;
		$delivery = Plugin::instance()->delivery;
		for ( $i = 0; $i <= Outbox_Store::MAX_ROWS; $i++ ) {
			$outbox->enqueue( Environment::site(), array( array( 'id' => "wp-c$i", 'kind' => 'tags', 'tags' => array( "wpt-x-$i" ), 'soft' => false, 'reason' => 'r', 'time' => gmdate( 'Y-m-d\TH:i:s\Z' ) ) ) );
		}
		$stats = $outbox->stats();
		$this->assertSame( 1, $stats['rows'] );
		Environment::start_receiver();
		$delivery->process( true );
		$events = Environment::accepted_events();
		$this->assertCount( 1, $events );
		$this->assertSame( 'all', $events[0]['kind'] );
	}

	public function test_rows_are_locked_while_being_sent() {
		global $wpdb;
		$outbox   = Plugin::instance()->outbox;
		$delivery = Plugin::instance()->delivery;
		Environment::stop_receiver();
		$outbox->enqueue( Environment::site(), array( array( 'id' => 'wp-lock1', 'kind' => 'all', 'soft' => false, 'reason' => 'r', 'time' => gmdate( 'Y-m-d\TH:i:s\Z' ) ) ) );
		Environment::start_receiver();
		// Another process holds the lock on the row.
		$wpdb->query( $wpdb->prepare( 'UPDATE ' . Outbox_Table::name() . ' SET lock_token = %s, locked_until = %d, next_attempt_at = 0', 'other', time() + 60 ) );
		$report = $delivery->process( true );
		$this->assertSame( 0, $report['sent'] );
		$this->assertSame( array(), Environment::webhooks() );
		// The lock expires (its holder died): the row is sent.
		$wpdb->query( 'UPDATE ' . Outbox_Table::name() . ' SET locked_until = 1' );
		$report = $delivery->process( true );
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
		$this->assertSame( Outbox_Table::name(), $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Outbox_Table::name() ) ) );
		$this->assertSame( Outbox_Table::DB_VERSION, get_option( Outbox_Table::DB_OPTION ) );
		Outbox_Table::install(); // Idempotent.
		$this->assertSame( Outbox_Table::name(), $wpdb->get_var( $wpdb->prepare( 'SHOW TABLES LIKE %s', Outbox_Table::name() ) ) );
	}

	/** The columns of schema 2 (solo, dead_at) are added to a table of an earlier version on plugins_loaded. */
	public function test_older_table_is_upgraded() {
		global $wpdb;
		$wpdb->query( 'ALTER TABLE ' . Outbox_Table::name() . ' DROP COLUMN solo, DROP COLUMN dead_at' );
		update_option( Outbox_Table::DB_OPTION, '1' );
		Outbox_Table::maybe_install();
		$columns = $wpdb->get_col( 'SHOW COLUMNS FROM ' . Outbox_Table::name() );
		$this->assertContains( 'solo', $columns );
		$this->assertContains( 'dead_at', $columns );
		$this->assertSame( Outbox_Table::DB_VERSION, get_option( Outbox_Table::DB_OPTION ) );
	}

	private function tag_event( $id, array $tags ) {
		return array( 'id' => $id, 'kind' => 'tags', 'tags' => $tags, 'soft' => false, 'reason' => 'r', 'time' => gmdate( 'Y-m-d\TH:i:s\Z' ) );
	}

	private function message_ids() {
		global $wpdb;
		return $wpdb->get_col( 'SELECT message_id FROM ' . Outbox_Table::name() . ' ORDER BY id' );
	}

	/** A 413 is split in halves (new webhook ids, same event ids) until every part fits. */
	public function test_413_splits_the_batch_in_halves_until_it_fits() {
		$outbox   = Plugin::instance()->outbox;
		$delivery = Plugin::instance()->delivery;
		$events = array();
		$tags   = array();
		for ( $i = 0; $i < 8; $i++ ) {
			$chunk = array();
			for ( $j = 0; $j < 40; $j++ ) {
				$chunk[] = "wpt-split-$i-$j";
			}
			$tags     = array_merge( $tags, $chunk );
			$events[] = $this->tag_event( "wp-split-$i", $chunk );
		}
		$outbox->enqueue( Environment::site(), $events );
		$original = $this->message_ids()[0];
		// Two of these events fit, three do not.
		$two = strlen( wp_json_encode( array( 'site' => Environment::site(), 'events' => array_slice( $events, 0, 2 ) ), JSON_UNESCAPED_SLASHES ) );
		Environment::receiver_control( 'max-bytes ' . ( $two + 20 ) );

		$delivery->process( true, 50 );

		$hooks = Environment::webhooks();
		$this->assertSame( array( 413 => 3, 202 => 4 ), array_count_values( array_column( $hooks, 'status' ) ), '8 -> 4+4 -> 2+2+2+2' );
		$this->assertEqualsCanonicalizing( array_column( $events, 'id' ), array_column( Environment::accepted_events(), 'id' ), 'every event once, ids kept' );
		$this->assertEqualsCanonicalizing( $tags, $this->sent_tags() );
		$ok_ids = array();
		foreach ( $hooks as $hook ) {
			if ( 202 === $hook['status'] ) {
				$ok_ids[] = $hook['webhook_id'];
			}
		}
		$this->assertNotContains( $original, $ok_ids, 'a different payload gets its own webhook id' );
		$this->assertSame( $ok_ids, array_unique( $ok_ids ) );
		$stats = $outbox->stats();
		$this->assertSame( 0, $stats['rows'] );
		$this->assertSame( 0, $stats['dead'] );
	}

	/** One event is split by its keys; what cannot shrink is dead-lettered, not retried. */
	public function test_413_splits_one_event_by_keys_and_dead_letters_what_cannot_shrink() {
		$outbox   = Plugin::instance()->outbox;
		$delivery = Plugin::instance()->delivery;
		$tags   = array();
		for ( $j = 0; $j < 64; $j++ ) {
			$tags[] = "wpt-one-$j";
		}
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-one', $tags ) ) );
		$quarter = strlen( wp_json_encode( array( 'site' => Environment::site(), 'events' => array( $this->tag_event( 'wp-one.2.2', array_slice( $tags, 48, 16 ) ) ) ), JSON_UNESCAPED_SLASHES ) );
		Environment::receiver_control( 'max-bytes ' . ( $quarter + 5 ) );
		$delivery->process( true, 50 );
		$this->assertEqualsCanonicalizing( $tags, $this->sent_tags() );
		$this->assertEqualsCanonicalizing( array( 'wp-one.1.1', 'wp-one.1.2', 'wp-one.2.1', 'wp-one.2.2' ), array_column( Environment::accepted_events(), 'id' ) );
		$this->assertSame( 0, $outbox->stats()['rows'] );

		// A single key that is still too large: dead-lettered at once (and its full-purge fallback too).
		Environment::clear_webhooks();
		Environment::receiver_control( 'max-bytes 50' );
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-huge', array( 'wpt-huge' ) ) ) );
		$delivery->process( true, 50 );
		$this->assertSame( array( 413, 413 ), array_column( Environment::webhooks(), 'status' ), 'the batch, then its full-purge fallback; no retries' );
		$stats = $outbox->stats();
		$this->assertSame( 0, $stats['rows'] );
		$this->assertSame( 2, $stats['dead'] );
		$this->assertStringContainsString( 'HTTP 413', $stats['dead_reason'] );
		$delivery->process( true, 50 );
		$this->assertCount( 2, Environment::webhooks(), 'dead letters are not retried' );
	}

	/**
	 * 400 and 403 are permanent: the refused batch is dead-lettered at once (visible with
	 * its reason), merged neighbours still go out, and a full purge with its own id replaces it.
	 */
	public function test_400_and_403_are_dead_lettered_at_once_and_replaced_by_a_full_purge() {
		$outbox   = Plugin::instance()->outbox;
		$delivery = Plugin::instance()->delivery;
		Environment::stop_receiver();
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-good-1', array( 'wpt-good-1' ) ) ) );
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-bad', array( 'wpt-bad' ) ) ) );
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-good-2', array( 'wpt-good-2' ) ) ) );
		$bad_id = $this->message_ids()[1];
		Environment::start_receiver();
		Environment::receiver_control( 'refuse-tag wpt-bad 400' );

		$delivery->process( true, 50 );

		$hooks = Environment::webhooks();
		$this->assertSame( 400, $hooks[0]['status'], 'the merged batch' );
		$this->assertCount( 3, $hooks[0]['body']['events'] );
		$this->assertEqualsCanonicalizing( array( 'wpt-good-1', 'wpt-good-2' ), $this->sent_tags() );
		$this->assertTrue( $this->sent_all(), 'a full purge replaces the refused batch' );
		$bad_sends = array_values(
			array_filter(
				$hooks,
				static function ( $hook ) {
					return in_array( 'wp-bad', array_column( $hook['body']['events'], 'id' ), true );
				}
			)
		);
		$this->assertCount( 2, $bad_sends, 'merged once, alone once, never again' );
		foreach ( $hooks as $hook ) {
			if ( 'all' === $hook['body']['events'][0]['kind'] ) {
				$this->assertNotSame( $bad_id, $hook['webhook_id'], 'the replacement has its own webhook id' );
			}
		}
		$stats = $outbox->stats();
		$this->assertSame( 0, $stats['rows'] );
		$this->assertSame( 1, $stats['dead'] );
		$this->assertStringContainsString( 'HTTP 400', $stats['dead_reason'] );
		$this->assertStringNotContainsString( 'forced by test', $stats['dead_reason'], 'the body is not repeated' );
		$this->assertFalse( wp_next_scheduled( Outbox_Delivery::CRON_HOOK ) && $stats['rows'], 'nothing left to retry' );

		// Visible in Site Health and the status panel, with the reason.
		$health = ( new \VarnishEdge\Site_Health( Plugin::instance()->settings, $outbox, Plugin::instance()->live_log, Plugin::instance()->live ) )->run();
		$this->assertSame( 'critical', $health['status'] );
		$this->assertStringContainsString( 'refused by the purger', $health['description'] );
		$this->assertStringContainsString( 'HTTP 400', $health['description'] );
		$admin = new \VarnishEdge\Admin_Page( Plugin::instance()->settings, $outbox, $delivery, Plugin::instance()->queue, Plugin::instance()->manual, Plugin::instance()->live_log, Plugin::instance()->live );
		ob_start();
		$admin->render();
		$html = ob_get_clean();
		$this->assertStringContainsString( 'Refused by the purger', $html );
		$this->assertStringContainsString( '1 batch, not retried', $html );

		$count = count( Environment::webhooks() );
		$this->make_due();
		$delivery->process( true, 50 );
		$this->assertCount( $count, Environment::webhooks(), 'a dead letter is not retried by the schedule' );

		// The cause fixed, "Deliver outbox now" sends it again.
		Environment::receiver_control( '0' );
		Environment::clear_webhooks();
		$outbox->retry_dead();
		$delivery->process( true, 50 );
		$this->assertSame( array( 'wpt-bad' ), $this->sent_tags() );
		$this->assertSame( 0, $outbox->stats()['dead'] );

		// 403 (site not allowed): the batch and its fallback are dead at once, one request each.
		Environment::clear_webhooks();
		Environment::receiver_status( 403 );
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-forbidden', array( 'wpt-forbidden' ) ) ) );
		$delivery->process( true, 50 );
		$this->assertSame( array( 403, 403 ), array_column( Environment::webhooks(), 'status' ) );
		$stats = $outbox->stats();
		$this->assertSame( 0, $stats['rows'] );
		$this->assertSame( 2, $stats['dead'] );
		$this->assertStringContainsString( 'HTTP 403', $stats['dead_reason'] );
		$this->assertStringContainsString( Environment::site(), $stats['dead_reason'], 'says which site to allow' );
	}

	/** The full purge that replaces an undeliverable batch is a new payload with a new webhook id. */
	public function test_dead_letter_after_max_attempts_gets_its_own_webhook_id() {
		global $wpdb;
		$outbox   = Plugin::instance()->outbox;
		$delivery = Plugin::instance()->delivery;
		Environment::receiver_status( 503 );
		$outbox->enqueue( Environment::site(), array( $this->tag_event( 'wp-old', array( 'wpt-old' ) ) ) );
		$original = $this->message_ids()[0];
		$wpdb->query( $wpdb->prepare( 'UPDATE ' . Outbox_Table::name() . ' SET attempts = %d', Outbox_Delivery::MAX_ATTEMPTS - 1 ) );
		$delivery->process( true );
		$this->assertSame( $original, Environment::webhooks()[0]['webhook_id'] );
		$row = $wpdb->get_row( 'SELECT * FROM ' . Outbox_Table::name() );
		$this->assertSame( 'all', json_decode( $row->events, true )[0]['kind'] );

		Environment::receiver_status( 0 );
		$delivery->process( true );
		$hooks = Environment::webhooks();
		$this->assertSame( 202, $hooks[1]['status'] );
		$this->assertSame( 'all', $hooks[1]['body']['events'][0]['kind'] );
		$this->assertNotSame( $original, $hooks[1]['webhook_id'], 'a different payload never reuses the webhook id' );
	}

	private function assertNotWPError( $value ) {
		$this->assertFalse( is_wp_error( $value ), is_wp_error( $value ) ? $value->get_error_message() : '' );
	}
}
