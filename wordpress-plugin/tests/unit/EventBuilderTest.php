<?php
use VarnishEdge\Event_Builder;
use VarnishEdge\Invalidation;
use VarnishEdge\Key_Scheme;
use VarnishEdge\Outbox_Store;

class EventBuilderTest extends \PHPUnit\Framework\TestCase {

	public function test_hard_wins_over_soft_and_foreign_urls_are_dropped(): void {
		$inv = ( new Invalidation() )
			->tags( array( 'ns-p-1', 'ns-home' ) )
			->tags( array( 'ns-home', 'ns-pl-1' ), true )
			->urls( array( 'http://example.com:8080/a/', 'http://evil.test/x', 'http://example.com:8080/ü/#frag' ) )
			->reason( 'r1' )->reason( 'r2' );
		$events = Event_Builder::build( $inv, 'example.com:8080', new Key_Scheme( 'ns' ), 1795300000 );
		$this->assertCount( 3, $events );
		$this->assertSame( array( 'ns-p-1', 'ns-home' ), $events[0]['tags'] );
		$this->assertFalse( $events[0]['soft'] );
		$this->assertSame( array( 'ns-pl-1', 'ns-pl-many' ), $events[1]['tags'] );
		$this->assertTrue( $events[1]['soft'] );
		$this->assertSame( array( 'http://example.com:8080/a/', 'http://example.com:8080/%C3%BC/' ), $events[2]['urls'] );
		$this->assertSame( 'r1; r2', $events[0]['reason'] );
		$this->assertSame( '2026-11-21T22:26:40Z', $events[0]['time'] );
		$this->assertNotSame( $events[0]['id'], $events[1]['id'] );
	}

	public function test_all_replaces_everything(): void {
		$inv    = ( new Invalidation() )->tags( array( 'ns-p-1' ) )->everything();
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertCount( 1, $events );
		$this->assertSame( 'all', $events[0]['kind'] );
	}

	public function test_large_sets_are_chunked_and_reasons_truncated(): void {
		$inv = new Invalidation();
		for ( $i = 0; $i < 2500; $i++ ) {
			$inv->tags( array( "ns-home$i" ) );
		}
		$inv->reason( str_repeat( 'é', 400 ) );
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertCount( 3, $events );
		$this->assertCount( 1000, $events[0]['tags'] );
		$this->assertCount( 500, $events[2]['tags'] );
		$this->assertLessThanOrEqual( 500, strlen( $events[0]['reason'] ) );
		$this->assertTrue( mb_check_encoding( $events[0]['reason'], 'UTF-8' ) );
	}

	/** Events carry exactly the keys of the shared grammar: one bad key would make the purger refuse the batch. */
	public function test_events_carry_only_keys_of_the_grammar(): void {
		$grammar = json_decode( (string) file_get_contents( dirname( __DIR__, 3 ) . '/testdata/key-grammar.json' ), true );
		$inv     = ( new Invalidation() )->tags( array_merge( $grammar['key']['valid'], $grammar['key']['invalid'], array( "ns-p-1\n" ) ) );
		$events  = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertCount( 1, $events );
		$this->assertSame( $grammar['key']['valid'], $events[0]['tags'] );
	}

	/** The pages to re-fetch ride on the last event: at most 50, in order, this site's only, once each. */
	public function test_refresh_urls_ride_on_the_last_event(): void {
		$urls = array( 'http://example.com/first/', 'http://evil.test/x', 'http://example.com/first/#top', 'http://example.com/ü/' );
		for ( $i = 0; $i < 60; $i++ ) {
			$urls[] = "http://example.com/p$i/";
		}
		$inv    = ( new Invalidation() )->tags( array( 'ns-p-1' ) )->urls( array( 'http://example.com/first/' ) )->refresh( $urls );
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertCount( 2, $events );
		$this->assertArrayNotHasKey( 'refresh', $events[0] );
		$refresh = $events[1]['refresh'];
		$this->assertCount( 50, $refresh );
		$this->assertSame( array( 'http://example.com/first/', 'http://example.com/%C3%BC/', 'http://example.com/p0/' ), array_slice( $refresh, 0, 3 ) );
		$this->assertSame( 'http://example.com/p47/', $refresh[49] );

		$all = Event_Builder::build( ( new Invalidation() )->everything()->refresh( array( 'http://example.com/' ) ), 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertSame( array( 'http://example.com/' ), $all[0]['refresh'] );
		$none = Event_Builder::build( ( new Invalidation() )->tags( array( 'ns-p-1' ) ), 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertArrayNotHasKey( 'refresh', $none[0], 'no field without pages to refresh' );
	}

	public function test_merged_refresh_lists_keep_the_first_one_s_order(): void {
		$a = ( new Invalidation() )->refresh( array( 'u1', 'u2' ) );
		$a->merge( ( new Invalidation() )->refresh( array( 'u3', 'u1' ) )->refresh_site() );
		$this->assertSame( array( 'u1', 'u2', 'u3' ), array_keys( $a->refresh ) );
		$this->assertTrue( $a->refresh_site );
		$this->assertTrue( ( new Invalidation() )->refresh( array( 'u1' ) )->is_empty(), 'a refresh alone invalidates nothing' );
	}

	public function test_empty_invalidation_builds_nothing(): void {
		$this->assertSame( array(), Event_Builder::build( new Invalidation(), 'example.com', new Key_Scheme( 'ns' ), time() ) );
		$this->assertTrue( ( new Invalidation() )->is_empty() );
	}

	/** Long URLs: each event stays under the purger's 256 KiB, each request under its 1 MiB. */
	public function test_events_and_requests_fit_the_purgers_byte_limits(): void {
		$inv = new Invalidation();
		for ( $i = 0; $i < 1500; $i++ ) {
			$inv->urls( array( 'http://example.com/' . str_pad( (string) $i, 2000, 'x' ) . '/' ) );
		}
		for ( $i = 0; $i < 50; $i++ ) {
			$inv->refresh( array( 'http://example.com/r' . str_pad( (string) $i, 2000, 'y' ) . '/' ) );
		}
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertSame( 1500, array_sum( array_map( fn( $e ) => count( $e['urls'] ), $events ) ), 'every URL kept' );
		foreach ( $events as $event ) {
			$this->assertLessThanOrEqual( 262144, strlen( wp_json_encode( $event, JSON_UNESCAPED_SLASHES ) ), 'event bytes' );
		}
		$parts = Outbox_Store::sendable( $events );
		$this->assertGreaterThan( 1, count( $parts ), 'three megabytes of URLs go in several requests' );
		$this->assertSame( $events, array_merge( ...$parts ), 'in order, nothing lost' );
		foreach ( $parts as $part ) {
			$this->assertLessThanOrEqual( 1048576, strlen( wp_json_encode( array( 'site' => 'example.com', 'events' => $part ), JSON_UNESCAPED_SLASHES ) ) );
		}
	}

	/** Past MAX_BATCH_ITEMS keys and URLs the batch is one whole-site purge, refresh kept. */
	public function test_a_batch_past_the_item_limit_purges_the_whole_site(): void {
		$inv = ( new Invalidation() )->refresh( array( 'http://example.com/' ) )->reason( 'post 1 trashed' );
		for ( $i = 0; $i <= Event_Builder::MAX_BATCH_ITEMS; $i++ ) {
			$inv->tags( array( "ns-x$i" ) );
		}
		$events = Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() );
		$this->assertCount( 1, $events );
		$this->assertSame( 'all', $events[0]['kind'] );
		$this->assertSame( array( 'http://example.com/' ), $events[0]['refresh'] );
		$this->assertStringStartsWith( '20001 keys and URLs: whole site purged instead; post 1 trashed', $events[0]['reason'] );
		array_pop( $inv->hard_tags );
		$this->assertSame( 20, count( Event_Builder::build( $inv, 'example.com', new Key_Scheme( 'ns' ), time() ) ), 'at the limit: precise, 20 events' );
	}
}
