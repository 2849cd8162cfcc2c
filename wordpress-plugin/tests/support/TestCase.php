<?php
/**
 * Base class for integration tests against the real WordPress of the environment.
 */

use VarnishEdge\Plugin;

abstract class VE_TestCase extends \PHPUnit\Framework\TestCase {

	/** @var array<string,int> */
	protected static $ids;

	public static function setUpBeforeClass(): void {
		self::$ids = json_decode( file_get_contents( dirname( Environment::$wp ) . '/fixtures.json' ), true );
	}

	protected function setUp(): void {
		parent::setUp();
		wp_set_current_user( 1 );
		$this->end_request();
		Plugin::instance()->outbox->clear();
		Environment::receiver_status( 0 );
		Environment::start_receiver();
		Environment::clear_webhooks();
	}

	protected function tearDown(): void {
		Environment::receiver_status( 0 );
		Environment::start_receiver();
		parent::tearDown();
	}

	/** What WordPress does at `shutdown`: commit the request's batch and deliver it. */
	protected function end_request() {
		Plugin::instance()->queue->dispatch();
	}

	protected function key( $suffix ) {
		return Environment::NS . '-' . $suffix;
	}

	/** Keys of accepted events, split by hardness. */
	protected function sent_tags( $soft = null ) {
		$out = array();
		foreach ( Environment::accepted_events() as $event ) {
			if ( 'tags' === $event['kind'] && ( null === $soft || $event['soft'] === $soft ) ) {
				$out = array_merge( $out, $event['tags'] );
			}
		}
		return array_values( array_unique( $out ) );
	}

	protected function sent_urls( $kind = 'urls' ) {
		$out = array();
		foreach ( Environment::accepted_events() as $event ) {
			if ( $kind === $event['kind'] ) {
				$out = array_merge( $out, $event['urls'] );
			}
		}
		return array_values( array_unique( $out ) );
	}

	protected function sent_all() {
		foreach ( Environment::accepted_events() as $event ) {
			if ( 'all' === $event['kind'] ) {
				return true;
			}
		}
		return false;
	}

	protected function new_post( array $args = array() ) {
		$id = wp_insert_post(
			array_merge(
				array(
					'post_title'   => 'Temp ' . wp_generate_password( 6, false ),
					'post_content' => 'temporary',
					'post_status'  => 'publish',
					'post_date'    => '2025-06-15 12:00:00',
				),
				$args
			)
		);
		$this->assertIsInt( $id );
		$this->end_request();
		Environment::clear_webhooks();
		return $id;
	}
}
