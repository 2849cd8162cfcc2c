<?php
use VarnishEdge\Attachment_Files;

require_once ABSPATH . 'wp-admin/includes/image-edit.php';

/**
 * Media changes purge the files themselves (cached for days by the VCL), not only the pages.
 */
class MediaTest extends VE_TestCase {

	protected function tearDown(): void {
		unset( $_REQUEST['history'], $_REQUEST['target'], $_REQUEST['do'] );
		parent::tearDown();
	}

	/** What an upload does (`media_handle_upload()`): file, attachment, then generated metadata. */
	private function upload_image( string $name, int $width, int $height ): int {
		$img = imagecreatetruecolor( $width, $height );
		imagefilledrectangle( $img, 0, 0, intdiv( $width, 3 ), $height - 1, imagecolorallocate( $img, 200, 30, 30 ) );
		ob_start();
		imagejpeg( $img, null, 70 );
		$upload = wp_upload_bits( $name, null, ob_get_clean(), '2025/06' );
		$this->assertFalse( $upload['error'] );
		$id = wp_insert_attachment( array( 'post_title' => $name, 'post_mime_type' => 'image/jpeg', 'post_status' => 'inherit' ), $upload['file'] );
		wp_update_attachment_metadata( $id, wp_generate_attachment_metadata( $id, $upload['file'] ) );
		$this->assertNotEmpty( wp_get_attachment_metadata( $id )['sizes'] );
		return $id;
	}

	/** What the media library's image editor does on "Save" after a rotation. */
	private function rotate_in_image_editor( int $id ): void {
		$_REQUEST['history'] = '[{"r":90}]';
		$_REQUEST['target']  = 'all';
		$result              = wp_save_image( $id );
		$this->assertFalse( isset( $result->error ), $result->error ?? '' );
	}

	/** URLs of the current main file and sizes, as themes address them (next to the main file). */
	private function shown_file_urls( int $id ): array {
		$main = wp_get_attachment_url( $id );
		$urls = array( $main );
		foreach ( wp_get_attachment_metadata( $id )['sizes'] as $size ) {
			$urls[] = dirname( $main ) . '/' . $size['file'];
		}
		return $urls;
	}

	/** URLs of hard `urls` events. */
	private function hard_urls(): array {
		$out = array();
		foreach ( Environment::accepted_events() as $event ) {
			if ( 'urls' === $event['kind'] && false === $event['soft'] ) {
				$out = array_merge( $out, $event['urls'] );
			}
		}
		return $out;
	}

	public function test_new_upload_purges_only_the_rest_media_listings(): void {
		$this->upload_image( 'fresh.jpg', 1200, 800 );
		$this->end_request();
		// No page or file can show it yet; /wp/v2/media lists the newest attachments first.
		$this->assertEqualsCanonicalizing( array( $this->key( 'r-c-media' ), $this->key( 'r-q-media' ) ), $this->sent_tags( true ) );
		$this->assertSame( array(), $this->sent_tags( false ) );
		$this->assertSame( array(), $this->sent_urls() );
	}

	public function test_deleting_an_image_purges_original_every_size_and_backups(): void {
		// Past big_image_size_threshold (2560): WordPress serves a -scaled copy and keeps the original.
		$att  = $this->upload_image( 'takedown.jpg', 2600, 1300 );
		$meta = wp_get_attachment_metadata( $att );
		$this->assertArrayHasKey( 'original_image', $meta );
		$this->rotate_in_image_editor( $att );
		$this->end_request();
		$post = $this->new_post( array( 'post_content' => '<img class="wp-image-' . $att . '" src="' . esc_url( wp_get_attachment_image_url( $att, 'medium' ) ) . '">' ) );

		$dir     = dirname( wp_get_attachment_url( $att ) );
		$backups = get_post_meta( $att, '_wp_attachment_backup_sizes', true );
		$this->assertArrayHasKey( 'full-orig', $backups );
		$expected = array_merge( $this->shown_file_urls( $att ), array( wp_get_original_image_url( $att ) ) );
		foreach ( $backups as $backup ) {
			$expected[] = $dir . '/' . $backup['file'];
		}
		$this->assertContains( $dir . '/takedown.jpg', $expected, 'the uploaded original' );
		$this->assertContains( $dir . '/takedown-scaled.jpg', $expected, 'the file served before the edit' );
		$this->assertGreaterThan( 8, count( array_unique( $expected ) ) );

		$this->assertInstanceOf( WP_Post::class, wp_delete_attachment( $att, true ) );
		$this->assertFileDoesNotExist( WP_CONTENT_DIR . '/uploads/2025/06/takedown.jpg' );
		$this->end_request();
		$urls = $this->hard_urls();
		foreach ( $expected as $url ) {
			$this->assertContains( $url, $urls );
		}
		$this->assertContains( $this->key( "p-$att" ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( "e-$att" ), $this->sent_tags( false ), 'every page that rendered it' );
		wp_delete_post( $post, true );
		$this->end_request();
	}

	public function test_image_edit_purges_old_and_new_file_urls_and_embedding_posts(): void {
		$att   = $this->upload_image( 'edited.jpg', 1200, 800 );
		$page  = get_permalink( $att );
		$post  = $this->new_post( array( 'post_content' => '<!-- wp:image {"id":' . $att . '} --><figure class="wp-block-image"><img src="' . esc_url( wp_get_attachment_image_url( $att, 'large' ) ) . '" class="wp-image-' . $att . '"/></figure><!-- /wp:image -->' ) );
		$thumb = $this->new_post();
		set_post_thumbnail( $thumb, $att );
		$this->end_request();
		Environment::clear_webhooks();
		// The image block and the featured image record the attachment on the pages rendering them.
		$this->assertContains( $this->key( "e-$att" ), Environment::keys_of( Environment::fetch( get_permalink( $post ) ) ), 'image block' );
		$this->assertContains( $this->key( "e-$att" ), Environment::keys_of( Environment::fetch( get_permalink( $thumb ) ) ), 'featured image' );

		$old = $this->shown_file_urls( $att );
		$this->rotate_in_image_editor( $att );
		$new = $this->shown_file_urls( $att );
		$this->assertSame( array(), array_intersect( $old, $new ), 'without IMAGE_EDIT_OVERWRITE every file gets a new name' );
		$this->end_request();

		$this->assertCount( 1, Environment::webhooks() );
		$urls = $this->hard_urls();
		foreach ( array_merge( $old, $new, array( $page ) ) as $url ) {
			$this->assertContains( $url, $urls );
		}
		$this->assertContains( $this->key( "p-$att" ), $this->sent_tags( false ) );
		$this->assertContains( $this->key( "e-$att" ), $this->sent_tags( false ), 'one key reaches every page showing it' );
		wp_delete_post( $post, true );
		wp_delete_post( $thumb, true );
		wp_delete_attachment( $att, true );
		$this->end_request();
	}

	public function test_regenerating_sizes_purges_the_rewritten_files(): void {
		$att = $this->upload_image( 'regenerated.jpg', 1200, 800 );
		$this->end_request();
		Environment::clear_webhooks();
		$files = $this->shown_file_urls( $att );

		// `wp media regenerate`: same names, new pixels, metadata written once per size.
		wp_update_attachment_metadata( $att, wp_generate_attachment_metadata( $att, get_attached_file( $att ) ) );
		$this->assertSame( $files, $this->shown_file_urls( $att ) );
		$this->end_request();
		$this->assertCount( 1, Environment::webhooks() );
		$urls = $this->hard_urls();
		foreach ( $files as $url ) {
			$this->assertContains( $url, $urls );
		}
		wp_delete_attachment( $att, true );
		$this->end_request();
	}

	public function test_deleting_a_pdf_purges_its_file_url(): void {
		$upload = wp_upload_bits( 'terms.pdf', null, "%PDF-1.4\n%%EOF\n", '2025/06' );
		$this->assertFalse( $upload['error'] );
		$att = wp_insert_attachment( array( 'post_title' => 'Terms', 'post_mime_type' => 'application/pdf', 'post_status' => 'inherit' ), $upload['file'] );
		wp_update_attachment_metadata( $att, wp_generate_attachment_metadata( $att, $upload['file'] ) );
		$this->end_request();
		Environment::clear_webhooks();
		$this->assertSame( $upload['url'], wp_get_attachment_url( $att ) );

		wp_delete_attachment( $att, true );
		$this->end_request();
		$this->assertContains( $upload['url'], $this->hard_urls() );
		$this->assertContains( $this->key( "p-$att" ), $this->sent_tags( false ) );
	}

	public function test_file_urls_accept_any_metadata(): void {
		$upload = wp_upload_bits( 'odd.png', null, 'not really a png', '2025/06' );
		$att    = wp_insert_attachment( array( 'post_title' => 'Odd', 'post_mime_type' => 'image/png', 'post_status' => 'inherit' ), $upload['file'] );
		$this->end_request();
		$dir = dirname( $upload['url'] );

		$this->assertSame( array(), Attachment_Files::urls( 0, array() ) );
		foreach ( array( false, '', 'garbage', 42, array( 'sizes' => 'x' ), array( 'file' => array() ) ) as $meta ) {
			$this->assertSame( array( $upload['url'] ), Attachment_Files::urls( $att, $meta, 'nope' ) );
		}
		$urls = Attachment_Files::urls(
			$att,
			array(
				'file'           => '../../wp-config.php',
				'original_image' => 7,
				'sizes'          => array( 'a' => 'x', 'b' => array( 'file' => array() ), 'c' => array( 'file' => '../../../escape-150x150.png' ), 'd' => array( 'file' => '..' ), 'e' => array( 'file' => 'odd-300x200.png' ) ),
			),
			array( 'full-orig' => array( 'file' => 'odd-orig.png' ), 'bad' => null )
		);
		$this->assertSame( array( $upload['url'], "$dir/escape-150x150.png", "$dir/odd-300x200.png", "$dir/odd-orig.png" ), $urls );
		wp_delete_attachment( $att, true );
		$this->end_request();
	}
}
