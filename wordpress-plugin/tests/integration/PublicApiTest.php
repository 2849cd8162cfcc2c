<?php
/**
 * The API for other plugins and themes: actions that invalidate keys, URLs or the whole site,
 * a filter adding keys to the response, filters mapping options and meta to keys. Everything goes
 * through the request's queue and the outbox.
 */
class PublicApiTest extends VE_TestCase {

	public function test_purge_keys_namespaces_the_keys() {
		do_action( 'varnish_edge_purge_keys', array( 'shop', 'product-42', Environment::NS . '-p-7', '' ), false, 'price list imported' );
		$this->end_request();
		$events = Environment::accepted_events();
		$this->assertCount( 1, $events );
		$this->assertSame( 'tags', $events[0]['kind'] );
		$this->assertFalse( $events[0]['soft'] );
		$this->assertSame( 'price list imported', $events[0]['reason'] );
		foreach ( array( 'shop', 'product-42', 'p-7' ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $events[0]['tags'] );
		}
		$this->assertNotContains( Environment::NS . '-' . Environment::NS . '-p-7', $events[0]['tags'], 'an already namespaced key is kept' );
	}

	public function test_purge_keys_soft() {
		do_action( 'varnish_edge_purge_keys', array( 'shop' ), true );
		$this->end_request();
		$this->assertContains( $this->key( 'shop' ), $this->sent_tags( true ) );
	}

	public function test_purge_urls_accepts_paths_and_urls_on_the_site_only() {
		do_action( 'varnish_edge_purge_urls', array( '/shop/', home_url( '/cart/' ), 'https://elsewhere.example/x/' ), false, 'shop changed' );
		$this->end_request();
		$urls = $this->sent_urls();
		$this->assertContains( home_url( '/shop/' ), $urls );
		$this->assertContains( home_url( '/cart/' ), $urls );
		$this->assertNotContains( 'https://elsewhere.example/x/', $urls );
	}

	public function test_purge_all_records_the_reason() {
		do_action( 'varnish_edge_purge_all', 'catalogue re-imported' );
		$this->end_request();
		$events = Environment::accepted_events();
		$this->assertCount( 1, $events );
		$this->assertSame( 'all', $events[0]['kind'] );
		$this->assertSame( 'catalogue re-imported', $events[0]['reason'] );
	}

	public function test_api_calls_share_the_outbox_when_the_purger_is_down() {
		Environment::receiver_status( 503 );
		do_action( 'varnish_edge_purge_keys', array( 'shop' ) );
		do_action( 'varnish_edge_purge_urls', array( '/shop/' ) );
		$this->end_request();
		$this->assertGreaterThan( 0, \VarnishEdge\Plugin::instance()->outbox->stats()['rows'], 'kept in the outbox' );
		Environment::receiver_status( 0 );
		Environment::clear_webhooks();
		\VarnishEdge\Plugin::instance()->delivery->process( true );
		$this->assertContains( $this->key( 'shop' ), $this->sent_tags() );
		$this->assertContains( home_url( '/shop/' ), $this->sent_urls() );
	}

	public function test_response_keys_filter_adds_namespaced_keys() {
		// The fixture mu-plugin tags the front page with `ve-notice`.
		$this->assertContains( $this->key( 've-notice' ), Environment::keys_of( Environment::fetch( '/' ) ) );
		$this->assertNotContains( $this->key( 've-notice' ), Environment::keys_of( Environment::fetch( '/about/' ) ) );
	}

	public function test_option_keys_filter_maps_an_option_to_keys() {
		update_option( 've_fixture_notice', 'mapped ' . wp_generate_password( 4, false ) );
		$this->end_request();
		$this->assertSame( array( $this->key( 've-notice' ) ), $this->sent_tags( false ) );
		$this->assertFalse( $this->sent_all() );
		delete_option( 've_fixture_notice' );
		$this->end_request();
	}
}
