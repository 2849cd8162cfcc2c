<?php
/**
 * Conservative by default: a save hard-invalidates the post's own pages whatever the diff says,
 * and post meta changes (inside or outside a save) invalidate the post's pages once per request.
 */
class PostMetaTest extends VE_TestCase {

	public function test_save_changing_only_a_custom_field_hard_purges_the_post_page(): void {
		$id = $this->new_post( array( 'meta_input' => array( 'price' => '10' ) ) );
		wp_update_post( array( 'ID' => $id, 'meta_input' => array( 'price' => '12' ) ) );
		$this->end_request();
		$this->assertCount( 1, Environment::webhooks() );
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( "r-p-$id" ), $this->sent_tags( false ) );
		$this->assertContains( get_permalink( $id ), $this->sent_urls() );
		$this->assertNotContains( $this->key( "pl-$id" ), $this->sent_tags(), 'nothing the diff cannot justify spreads further' );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_update_post_meta_outside_a_save_purges_the_post_once_per_request(): void {
		$id = $this->new_post( array( 'meta_input' => array( 'price' => '10', 'stock_note' => 'in stock' ) ) );
		// What an order does: several meta writes, no post save.
		update_post_meta( $id, 'price', '9' );
		update_post_meta( $id, 'stock_note', 'two left' );
		delete_post_meta( $id, 'stock_note' );
		add_post_meta( $id, 'badge', 'sale' );
		$this->end_request();
		$hooks = Environment::webhooks();
		$this->assertCount( 1, $hooks, 'coalesced into the request batch' );
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ) );
		$this->assertContains( get_permalink( $id ), $this->sent_urls() );
		$this->assertStringContainsString( "post $id meta changed", $hooks[0]['body']['events'][0]['reason'] );
		$this->assertNotContains( $this->key( 'home' ), $this->sent_tags() );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_meta_change_is_coalesced_with_other_changes_of_the_request(): void {
		$a = $this->new_post();
		$b = $this->new_post();
		update_post_meta( $a, 'price', '1' );
		wp_update_post( array( 'ID' => $b, 'post_title' => 'Retitled ' . wp_generate_password( 4, false ) ) );
		do_action( 'varnish_edge_purge_keys', array( 'shop' ) );
		$this->end_request();
		$this->assertCount( 1, Environment::webhooks() );
		$tags = $this->sent_tags();
		foreach ( array( "p-$a", "p-$b", 'shop' ) as $suffix ) {
			$this->assertContains( $this->key( $suffix ), $tags, $suffix );
		}
		wp_delete_post( $a, true );
		wp_delete_post( $b, true );
		$this->end_request();
	}

	public function test_internal_meta_keys_are_ignored_and_the_list_is_filterable(): void {
		$id = $this->new_post();
		update_post_meta( $id, '_edit_lock', time() . ':1' );
		update_post_meta( $id, '_edit_last', '1' );
		update_post_meta( $id, '_oembed_abc', '<iframe></iframe>' );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'WordPress bookkeeping purges nothing' );

		$ignore = static function ( array $keys ): array {
			$keys[] = 'view_count';
			return $keys;
		};
		add_filter( 'varnish_edge_ignored_meta_keys', $ignore );
		update_post_meta( $id, 'view_count', '42' );
		$this->end_request();
		remove_filter( 'varnish_edge_ignored_meta_keys', $ignore );
		$this->assertSame( array(), Environment::webhooks(), 'a key added to the ignore list' );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_meta_of_a_draft_purges_nothing(): void {
		$id = wp_insert_post( array( 'post_title' => 'Draft with price', 'post_status' => 'draft' ) );
		$this->end_request();
		Environment::clear_webhooks();
		update_post_meta( $id, 'price', '5' );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks() );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_meta_keys_filter_maps_a_meta_key_to_the_keys_it_affects(): void {
		// The fixture mu-plugin maps `stock` to `pl-<id>` and `shop` (a shop listing).
		$id = $this->new_post();
		update_post_meta( $id, 'stock', '3' );
		$this->end_request();
		$hard = $this->sent_tags( false );
		$this->assertContains( $this->key( "pl-$id" ), $hard );
		$this->assertContains( $this->key( 'shop' ), $hard );
		$this->assertContains( $this->key( "p-$id" ), $hard );
		wp_delete_post( $id, true );
		$this->end_request();
	}

	public function test_custom_field_printed_by_a_theme_is_fresh_after_update_post_meta(): void {
		$id   = $this->new_post( array( 'meta_input' => array( 'price' => '10' ) ) );
		$page = Environment::fetch( get_permalink( $id ) );
		$this->assertStringContainsString( 'Price: 10', $page['body'] );
		update_post_meta( $id, 'price', '11' );
		$this->end_request();
		$this->assertContains( $this->key( "p-$id" ), Environment::keys_of( $page ), 'the cached page carries the purged key' );
		$this->assertContains( $this->key( "p-$id" ), $this->sent_tags( false ) );
		$this->assertStringContainsString( 'Price: 11', Environment::fetch( get_permalink( $id ) )['body'] );
		wp_delete_post( $id, true );
		$this->end_request();
	}
}
